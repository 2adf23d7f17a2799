/**
 * The demo's simulated clock: the emulator and the bridge's worker read the same one, so business
 * hours and reply windows are decided on the script's morning whatever the real time is. It runs
 * at real speed between the script's jumps (so timestamps within a step look natural) and only
 * ever moves forward.
 */
export interface DemoClock {
  /** Simulated epoch milliseconds. */
  now(): number;
  date(): Date;
  /** Jumps forward to `ms` (a jump into the past is ignored: clocks the bridge reads never go back). */
  advanceTo(ms: number): void;
}

export function createDemoClock(startMs: number, realNow: () => number = Date.now): DemoClock {
  let offset = startMs - realNow();
  const now = () => realNow() + offset;
  return {
    now,
    date: () => new Date(now()),
    advanceTo(ms) {
      if (ms > now()) offset = ms - realNow();
    },
  };
}
