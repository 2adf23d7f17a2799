/**
 * Failed admin logins limited per client address: a few wrong passwords are free, then the
 * address is locked out for a time that doubles with each further failure, up to a cap. Pure (the
 * clock is injected); admin-guard.ts is its HTTP adapter.
 */

export interface LoginThrottleSettings {
  /** Wrong passwords an address may try before it is locked out. */
  freeFailures: number;
  /** The first lockout; each further failure doubles it. */
  firstLockoutMs: number;
  /** The longest lockout. */
  maxLockoutMs: number;
  /** An address's failures are forgotten this long after its last one (when not locked out). */
  forgetAfterMs: number;
  /** Addresses remembered at most: past it the oldest is forgotten (memory stays bounded). */
  maxAddresses: number;
}

/** 5 free, then 15 s, 30 s, 1 min, 2 min, 4 min, 5 min, 5 min...: about a dozen guesses an hour. */
export const LOGIN_THROTTLE_DEFAULTS: LoginThrottleSettings = {
  freeFailures: 5,
  firstLockoutMs: 15_000,
  maxLockoutMs: 300_000,
  forgetAfterMs: 3_600_000,
  maxAddresses: 10_000,
};

/** Before the password is checked: check it, or answer 429 without looking at it. */
export type LoginVerdict = { kind: 'check' } | { kind: 'locked'; retryAfterMs: number };

/** After a wrong password: consecutive failures so far, and the lockout it started (0: none yet). */
export interface FailureRecord {
  failures: number;
  lockedForMs: number;
}

export interface LoginThrottle {
  verdict(address: string): LoginVerdict;
  failed(address: string): FailureRecord;
  succeeded(address: string): void;
  /** Addresses remembered now. */
  size(): number;
}

interface AddressState {
  failures: number;
  lastFailureAt: number;
  lockedUntil: number;
}

export function createLoginThrottle(
  settings: LoginThrottleSettings = LOGIN_THROTTLE_DEFAULTS,
  now: () => number = Date.now,
): LoginThrottle {
  // Insertion order is age order: a failure moves its address to the end.
  const states = new Map<string, AddressState>();
  const current = (address: string, at: number): AddressState | undefined => {
    const state = states.get(address);
    if (state && at >= state.lockedUntil && at - state.lastFailureAt >= settings.forgetAfterMs) {
      states.delete(address);
      return undefined;
    }
    return state;
  };
  const makeRoom = (at: number) => {
    if (states.size < settings.maxAddresses) return;
    for (const address of states.keys()) current(address, at);
    while (states.size >= settings.maxAddresses) {
      const oldest = states.keys().next().value;
      if (oldest === undefined) break;
      states.delete(oldest);
    }
  };
  return {
    verdict(address) {
      const at = now();
      const state = current(address, at);
      if (state && at < state.lockedUntil) return { kind: 'locked', retryAfterMs: state.lockedUntil - at };
      return { kind: 'check' };
    },
    failed(address) {
      const at = now();
      const before = current(address, at);
      if (before === undefined) makeRoom(at);
      const failures = (before?.failures ?? 0) + 1;
      const lockedForMs = lockoutAfter(failures, settings);
      states.delete(address);
      states.set(address, { failures, lastFailureAt: at, lockedUntil: at + lockedForMs });
      return { failures, lockedForMs };
    },
    succeeded(address) {
      states.delete(address);
    },
    size: () => states.size,
  };
}

/** The lockout that the `failures`-th consecutive wrong password starts. */
export function lockoutAfter(failures: number, settings: LoginThrottleSettings): number {
  const past = failures - settings.freeFailures;
  if (past < 0) return 0;
  // 2 ** past overflows to Infinity long after the cap; Math.min keeps the cap.
  return Math.min(settings.firstLockoutMs * 2 ** past, settings.maxLockoutMs);
}
