import { describe, expect, it } from 'vitest';
import { fullJitterDelay, jobRetryDelay } from '../../../../src/worker/failures/backoff.js';

describe('backoff', () => {
  it('grows exponentially up to the cap (upper bound with random = 1)', () => {
    const top = (attempt: number) => fullJitterDelay(attempt, 1000, 300_000, () => 0.999999);
    expect([1, 2, 3, 4, 5].map(top)).toEqual([999, 1999, 3999, 7999, 15999]);
    expect(top(20)).toBe(299_999);
    expect(top(1_000)).toBe(299_999);
  });

  it('is fully jittered: zero at random = 0, never negative', () => {
    expect(fullJitterDelay(7, 1000, 300_000, () => 0)).toBe(0);
    expect(jobRetryDelay(7, 1000, 300_000, () => 0)).toBe(500);
  });
});
