import { describe, expect, it } from 'vitest';
import { prefixOfKeyStart } from '../../../src/cli/redis-target.js';

describe('prefixOfKeyStart: the redis.prefix a key stands for, as --prefix takes it', () => {
  it.each([
    ['cb', 'cb'],
    ['t-ops-1a2b', 't-ops-1a2b'],
    ['{cb}', 'cb'],
    ['{shop.eu}', 'shop.eu'],
    ['{cb:3}', 'cb'],
    ['{cb:3.17}', 'cb'],
  ])('%s -> %s', (start, prefix) => {
    expect(prefixOfKeyStart(start)).toBe(prefix);
  });
});
