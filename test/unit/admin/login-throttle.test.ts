import { describe, expect, it } from 'vitest';
import {
  createLoginThrottle,
  LOGIN_THROTTLE_DEFAULTS,
  lockoutAfter,
} from '../../../src/admin/login-throttle.js';

function clock() {
  let at = 1_000_000;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

describe('the admin login throttle', () => {
  it('lets 5 wrong passwords through, then locks out for 15 s, doubling up to 5 min', () => {
    expect(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 60].map((n) => lockoutAfter(n, LOGIN_THROTTLE_DEFAULTS)),
    ).toEqual([0, 0, 0, 0, 15_000, 30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000]);
    expect(lockoutAfter(10_000, LOGIN_THROTTLE_DEFAULTS)).toBe(300_000);
  });

  it('answers "locked" with the time left after the 5th failure, and checks again once it is over', () => {
    const time = clock();
    const throttle = createLoginThrottle(LOGIN_THROTTLE_DEFAULTS, time.now);
    for (let i = 1; i <= 4; i += 1) {
      expect(throttle.verdict('10.0.0.1')).toEqual({ kind: 'check' });
      expect(throttle.failed('10.0.0.1')).toEqual({ failures: i, lockedForMs: 0 });
    }
    expect(throttle.failed('10.0.0.1')).toEqual({ failures: 5, lockedForMs: 15_000 });
    expect(throttle.verdict('10.0.0.1')).toEqual({ kind: 'locked', retryAfterMs: 15_000 });
    time.advance(10_000);
    expect(throttle.verdict('10.0.0.1')).toEqual({ kind: 'locked', retryAfterMs: 5_000 });
    // Another address is not affected.
    expect(throttle.verdict('10.0.0.2')).toEqual({ kind: 'check' });
    time.advance(5_000);
    expect(throttle.verdict('10.0.0.1')).toEqual({ kind: 'check' });
    expect(throttle.failed('10.0.0.1')).toEqual({ failures: 6, lockedForMs: 30_000 });
  });

  it('forgets an address at its first right password, or an hour after its last failure', () => {
    const time = clock();
    const throttle = createLoginThrottle(LOGIN_THROTTLE_DEFAULTS, time.now);
    for (let i = 0; i < 5; i += 1) throttle.failed('a');
    throttle.succeeded('a');
    expect(throttle.verdict('a')).toEqual({ kind: 'check' });
    expect(throttle.failed('a').failures).toBe(1);
    for (let i = 0; i < 6; i += 1) throttle.failed('b');
    time.advance(LOGIN_THROTTLE_DEFAULTS.forgetAfterMs - 1);
    expect(throttle.failed('b').failures).toBe(7);
    time.advance(LOGIN_THROTTLE_DEFAULTS.forgetAfterMs);
    expect(throttle.failed('b').failures).toBe(1);
  });

  it('remembers at most maxAddresses, forgetting the oldest first', () => {
    const time = clock();
    const throttle = createLoginThrottle({ ...LOGIN_THROTTLE_DEFAULTS, maxAddresses: 3 }, time.now);
    for (const address of ['a', 'b', 'c']) throttle.failed(address);
    throttle.failed('a'); // now the newest
    throttle.failed('d');
    expect(throttle.size()).toBe(3);
    expect(throttle.failed('b').failures).toBe(1);
    expect(throttle.failed('a').failures).toBe(3);
  });
});
