import { describe, expect, it } from 'vitest';
import { settleWithin } from '../../../src/base/settle-within.js';

describe('settleWithin: a bounded wait that never rejects', () => {
  it('says settled for a promise that resolves or rejects in time', async () => {
    expect(await settleWithin(Promise.resolve(1), 1_000)).toBe('settled');
    expect(await settleWithin(Promise.reject(new Error('x')), 1_000)).toBe('settled');
    expect(await settleWithin(undefined, 0)).toBe('settled');
  });

  it('says timeout for a promise that never settles', async () => {
    const started = Date.now();
    expect(await settleWithin(new Promise(() => {}), 50)).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('says aborted when the signal aborts first (or had aborted), whatever the bound', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect(await settleWithin(new Promise(() => {}), Number.POSITIVE_INFINITY, controller.signal)).toBe(
      'aborted',
    );
    expect(await settleWithin(new Promise(() => {}), 1_000, controller.signal)).toBe('aborted');
  });
});
