import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long (required: nothing here waits forever). */
  timeoutMs: number;
  intervalMs?: number;
  /** Says what was awaited, for the error when the deadline passes. */
  what: string;
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`, or the deadline passes.
 * Used by tests and the demo to wait on conditions instead of sleeping and hoping.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 25;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`, {
        cause: lastError,
      });
    }
    await sleep(interval);
  }
}
