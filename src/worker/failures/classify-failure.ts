import { describeError } from '../../base/errors.js';
import { ForwardError } from '../../forward/forward-event.js';
import { CallBudgetExhaustedError } from './call-budget.js';

/**
 * How the worker treats a failed action, decided once here for every kind of error:
 * - `unknown-outcome`: the call may have taken effect; keep the ledger at `started` so the next
 *   run reconciles against history before doing it again.
 * - `transient`: nothing happened; retry the job with backoff (BullMQ attempts).
 * - `rate-limited`: the platform said 429; pause the queue for the Retry-After (capped), no attempt burnt.
 * - `auth`: 401/403, a configuration fault; pause and alert, do not fail jobs in bulk.
 * - `rejected`: the platform refused this input for good (4xx validation, unknown conversation);
 *   the action fails, the rest of the event goes on, and the event is dead-lettered for a person.
 * - `window-closed`: the client refused a free-form reply outside the 24-hour window.
 */
export type FailureClass =
  | { kind: 'unknown-outcome'; code: string; message: string }
  | { kind: 'transient'; code: string; message: string }
  | { kind: 'rate-limited'; code: string; message: string; retryAfterMs: number }
  | { kind: 'auth'; code: string; message: string }
  | { kind: 'rejected'; code: string; message: string }
  | { kind: 'window-closed'; code: string; message: string };

/** The platform client's side of the classification (adapted from its typed errors). */
export type PlatformErrorClassifier = (error: unknown) => FailureClass | undefined;

export function classifyFailure(error: unknown, platform: PlatformErrorClassifier): FailureClass {
  if (error instanceof ForwardError) {
    return error.retryable
      ? { kind: 'transient', code: error.code, message: error.message }
      : { kind: 'rejected', code: error.code, message: error.message };
  }
  if (error instanceof CallBudgetExhaustedError) {
    return { kind: 'rate-limited', code: error.code, message: error.message, retryAfterMs: 1_000 };
  }
  const known = platform(error);
  if (known) return known;
  return { kind: 'transient', code: 'UNEXPECTED', message: describeError(error) };
}
