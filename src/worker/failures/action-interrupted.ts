import type { FailureClass } from './classify-failure.js';

/**
 * Thrown by the executor (exactly-once/action-life.ts) to stop the run: the job is retried,
 * paused or dead-lettered by the processor, which reads the failure back (job-failure-policy.ts).
 */
export class ActionInterrupted extends Error {
  readonly failure: FailureClass;
  readonly actionId: string;
  constructor(actionId: string, failure: FailureClass, cause: unknown) {
    super(`action ${actionId} did not complete: ${failure.message}`, { cause });
    this.name = 'ActionInterrupted';
    this.failure = failure;
    this.actionId = actionId;
  }
}
