import { describe, expect, it } from 'vitest';
import { DemoError } from '../../../src/demo/demo-error.js';
import { provideRedis } from '../../../src/demo/provide-redis.js';

// Issue 30, item 4: the demo's REDIS_URL takes the rules of redis.url, checked before connecting.
describe("the demo's REDIS_URL", () => {
  it.each([
    [
      'redis://127.0.0.1:6379/abc',
      'REDIS_URL redis://127.0.0.1:6379/abc: the database part "abc" is not a database number',
    ],
    ['redis://127.0.0.1:0', 'REDIS_URL redis://127.0.0.1:0: port 0 is not a port'],
    ['http://127.0.0.1:6379', 'REDIS_URL must be a redis:// or rediss:// URL'],
  ])('%s is refused, saying how to write it', async (url, message) => {
    const refused = await provideRedis({ REDIS_URL: url }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DemoError);
    expect((refused as DemoError).message).toContain(message);
  });
});
