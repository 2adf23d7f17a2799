import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from '../../../src/emulator/sliding-window-limiter.js';

describe('SlidingWindowLimiter', () => {
  it('allows `limit` requests per window, then says how long to wait', () => {
    const limiter = new SlidingWindowLimiter(60_000);
    for (let t = 0; t < 3; t += 1) expect(limiter.check('a', 3, t * 1000).allowed).toBe(true);
    expect(limiter.check('a', 3, 2500)).toEqual({ allowed: false, retryAfterSeconds: 58 });
    // The first request (t=0) leaves the window at t=60 s.
    expect(limiter.check('a', 3, 59_999).allowed).toBe(false);
    expect(limiter.check('a', 3, 60_000).allowed).toBe(true);
    expect(limiter.check('a', 3, 60_001).allowed).toBe(false);
  });

  it('slides: no burst of 2x at a window edge', () => {
    const limiter = new SlidingWindowLimiter(10_000);
    for (let i = 0; i < 5; i += 1) expect(limiter.check('a', 5, 9_000).allowed).toBe(true);
    expect(limiter.check('a', 5, 10_500).allowed).toBe(false);
    expect(limiter.check('a', 5, 19_000).allowed).toBe(true);
  });

  it('keeps identities apart and does not count rejected requests', () => {
    const limiter = new SlidingWindowLimiter(1000);
    expect(limiter.check('a', 1, 0).allowed).toBe(true);
    expect(limiter.check('b', 1, 0).allowed).toBe(true);
    for (let i = 0; i < 10; i += 1) expect(limiter.check('a', 1, 500).allowed).toBe(false);
    expect(limiter.check('a', 1, 1000).allowed).toBe(true);
  });

  it('rejects everything with a limit of 0 and never reports less than 1 second', () => {
    const limiter = new SlidingWindowLimiter(500);
    expect(limiter.check('a', 0, 0)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    limiter.check('b', 1, 0);
    expect(limiter.check('b', 1, 499)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });
});
