import { type Job, type Queue, RateLimitError, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import { describeError } from '../../base/errors.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { ActionReport } from '../ports.js';
import { ActionInterrupted } from './action-interrupted.js';
import type { FailureClass } from './classify-failure.js';
import { addDeadLetter, type DeadLetter } from './dead-letters.js';

/**
 * What happens to a job whose run stopped, in one place (one owner per retry horizon):
 * - 429 from the platform: the whole queue pauses for Retry-After (capped), the job goes back to
 *   waiting without using an attempt (BullMQ manual rate limit).
 * - 401/403: a configuration fault. The queue pauses for `authFailurePauseMs`, an alarm is raised
 *   (log at error level, metric, RedisClient key for readiness) and jobs are NOT failed in bulk; the
 *   first job after the pause probes again.
 * - anything else: BullMQ retries with capped exponential backoff; on the last attempt the job is
 *   moved to the dead-letter set with its reason and the conversation's order moves on.
 */
export interface FailurePolicySettings {
  rateLimitPauseCapMs: number;
  authFailurePauseMs: number;
}

export interface FailurePolicyDeps {
  redis: RedisClient;
  keys: BridgeKeys;
  /** How long a dead letter is kept (`retention.dead_letters`). */
  deadLetterSeconds: number;
  queues: Queue[];
  settings: FailurePolicySettings;
  log: Logger;
  onPause?: (reason: 'rate-limited' | 'auth', ms: number) => void;
  /**
   * Pauses this business alone when others share the process (its jobs wait, delayed, until then),
   * never the queues the others share; false when it is served alone (the queues pause).
   */
  pauseBusiness?: (ms: number, reason: PauseReason) => boolean;
  onDeadLetter?: (entry: DeadLetter) => void;
}

export interface DeadLetterContext {
  queue: DeadLetter['queue'];
  conversationId: string | null;
  eventKey: string | null;
  actions: ActionReport[];
  /** Called after the dead letter is stored (e.g. to let the conversation's next event run). */
  release: () => Promise<void>;
}

export function failureOf(error: unknown): FailureClass {
  if (error instanceof ActionInterrupted) return error.failure;
  if (error instanceof UnrecoverableError)
    return { kind: 'rejected', code: 'UNRECOVERABLE', message: error.message };
  return { kind: 'transient', code: 'UNEXPECTED', message: describeError(error) };
}

/**
 * Thrown instead of BullMQ's RateLimitError when only one business pauses (RateLimitError
 * pauses the whole queue, every business with it): the
 * processor's caller moves the job to the delayed set until the pause ends, without an attempt.
 */
export class BusinessPaused extends Error {
  constructor(readonly ms: number) {
    super(`the business's platform calls are paused for ${ms} ms`);
    this.name = 'BusinessPaused';
  }
}

/** Pauses the queues (or, with several businesses, the one business); returns the error that says so. */
export type PauseReason = 'rate-limited' | 'auth';

async function pause(deps: FailurePolicyDeps, ms: number, reason: PauseReason): Promise<Error> {
  if (deps.pauseBusiness?.(ms, reason)) return new BusinessPaused(ms);
  await Promise.all(deps.queues.map((queue) => queue.rateLimit(ms)));
  return new RateLimitError();
}

/**
 * A 429 or a 401/403 pauses the queues and throws RateLimitError (the job waits without using an
 * attempt), or, with several businesses, pauses that business and throws BusinessPaused; any other
 * failure returns.
 */
export async function pauseOnFailure(failure: FailureClass, deps: FailurePolicyDeps): Promise<void> {
  if (failure.kind === 'rate-limited') {
    const ms = Math.max(100, Math.min(failure.retryAfterMs, deps.settings.rateLimitPauseCapMs));
    deps.log.warn(
      { pauseMs: ms, code: failure.code },
      `platform rate limit: pausing the queues for ${ms} ms`,
    );
    const paused = await pause(deps, ms, 'rate-limited');
    deps.onPause?.('rate-limited', ms);
    throw paused;
  }
  if (failure.kind === 'auth') {
    const ms = deps.settings.authFailurePauseMs;
    // The alarm key first: whoever reads the log line finds readiness already reporting it.
    await deps.redis.set(
      deps.keys.authAlarm,
      JSON.stringify({ since: new Date().toISOString(), code: failure.code, message: failure.message }),
      'PX',
      ms * 4,
    );
    deps.log.error(
      { pauseMs: ms, code: failure.code },
      `the platform rejects our credentials (${failure.message}). Nothing is failed or lost: all work is ` +
        `paused and retried every ${Math.round(ms / 1000)} s. Fix platform.auth in the config ` +
        '(the Business ID and Secret Key shown in the dashboard settings) and reload.',
    );
    const paused = await pause(deps, ms, 'auth');
    deps.onPause?.('auth', ms);
    throw paused;
  }
}

/** True when this failure ends the subject's tries: a permanent refusal, or the job's last attempt. */
export function isFinalFailure(job: Job, failure: FailureClass): boolean {
  return failure.kind === 'rejected' || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** Decides the fate of a failed run; always throws (BullMQ reads the error type). */
export async function handleJobFailure(
  job: Job,
  error: unknown,
  deps: FailurePolicyDeps,
  context: DeadLetterContext,
): Promise<never> {
  const failure = failureOf(error);
  await pauseOnFailure(failure, deps);
  if (!isFinalFailure(job, failure)) throw error instanceof Error ? error : new Error(failure.message);
  const entry = await deadLetter(job, failure, deps, context);
  throw new UnrecoverableError(`dead-lettered as ${entry.id}: ${failure.message}`);
}

/**
 * Stores a dead letter for one subject of a job (a timer, or one event of a batch: `data` is what
 * a replay re-adds), lets its conversation move on, and reports it.
 */
export async function deadLetter(
  job: Job,
  failure: FailureClass,
  deps: FailurePolicyDeps,
  context: DeadLetterContext & { data?: unknown; idSuffix?: string; attempts?: number },
): Promise<DeadLetter> {
  const failedAt = new Date().toISOString();
  const entry: DeadLetter = {
    id: `${job.id ?? 'job'}${context.idSuffix ? `-${context.idSuffix}` : ''}-${Date.parse(failedAt)}`,
    queue: context.queue,
    jobId: job.id ?? '',
    jobName: job.name,
    reason: failure.message,
    code: failure.code,
    attempts: context.attempts ?? job.attemptsMade + 1,
    failedAt,
    conversationId: context.conversationId,
    eventKey: context.eventKey,
    data: context.data ?? job.data,
    actions: context.actions.map((a) => (a.detail === undefined ? { id: a.id, state: a.state } : a)),
    replays: typeof job.data?.replay === 'number' ? job.data.replay : 0,
  };
  await addDeadLetter(deps.redis, deps.keys, entry, deps.deadLetterSeconds);
  await context.release();
  deps.onDeadLetter?.(entry);
  deps.log.error(
    { deadLetter: entry.id, code: failure.code, attempts: entry.attempts },
    `moved to the dead-letter set after ${entry.attempts} attempt(s): ${failure.message}. ` +
      `Inspect with \`convo-bridge dlq show ${entry.id}\`, replay with \`convo-bridge dlq retry ${entry.id}\`.`,
  );
  return entry;
}
