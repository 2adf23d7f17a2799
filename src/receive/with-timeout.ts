import { ReceiverError } from './receiver-errors.js';

/**
 * Bounds a Redis call in time: rejects with RECEIVER_REDIS_UNAVAILABLE after `ms`. The call itself
 * goes on; for an ingest that is safe, because a late success is recognised as a duplicate when the
 * platform retries the 503.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new ReceiverError(`${what} within ${ms} ms; check that Redis is running and reachable`, {
          code: 'RECEIVER_REDIS_UNAVAILABLE',
        }),
      );
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
