/** How a bounded wait ended. */
export type Settled = 'settled' | 'timeout' | 'aborted';

/**
 * Waits for `promise` for at most `ms` (or until `signal` aborts), and says which came first.
 * Never rejects: callers log their own errors. The promise itself goes on; this only stops waiting
 * (shutdown uses it so that a close that waits for an unreachable Redis cannot hold the process).
 */
export async function settleWithin(
  promise: Promise<unknown> | undefined,
  ms: number,
  signal?: AbortSignal,
): Promise<Settled> {
  if (promise === undefined) return 'settled';
  if (signal?.aborted) return 'aborted';
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const settled = promise.then(
    () => 'settled' as const,
    () => 'settled' as const,
  );
  const limits = new Promise<Settled>((resolve) => {
    if (Number.isFinite(ms)) timer = setTimeout(() => resolve('timeout'), ms);
    if (signal) {
      onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([settled, limits]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
