import { type WaitForOptions, waitFor } from '../../../src/base/wait-for.js';

const ABORTED = Symbol('aborted');

/**
 * waitFor (polling with a deadline) that also stops as soon as the scenario is aborted for running
 * out of budget, instead of polling processes that are already gone until its own deadline.
 */
export async function waitUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions & { signal: AbortSignal },
): Promise<T> {
  const value = await waitFor<T | typeof ABORTED>(
    async () => (options.signal.aborted ? ABORTED : probe()),
    options,
  );
  if (value === ABORTED) throw options.signal.reason;
  return value;
}
