import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { describeIssuePaths } from '../../base/issue-paths.js';
import { isBurstJobData } from '../bursts/burst-job.js';
import { loadFacts } from '../conversation-facts.js';
import { RunState } from '../exactly-once/execute-actions.js';
import { handleJobFailure } from '../failures/job-failure-policy.js';
import type { ActionReport } from '../ports.js';
import { claimTimer, releaseTimer, TimerJobDataSchema } from '../timers/timers.js';
import { MAX_WAIT_FOR_EARLIER_EVENTS_MS, ORDER_RECHECK_MS } from './order-gate.js';
import { processBurstJob } from './process-burst.js';
import type { EventProcessorDeps } from './processor-deps.js';
import { runPlannedActions } from './run-planned-actions.js';

export interface TimerJobResult {
  timerId: string;
  state: 'fired' | 'cancelled';
  actions: ActionReport[];
}

/**
 * The processor of the `timers` queue. A due timer first lets the events that reached the
 * receiver before it fired be processed (an agent reply still in the queue must be able to cancel
 * it), then claims its registration (or finds it cancelled) and runs its actions through the
 * ledger, like an event.
 */
export async function processTimerJob(
  job: Job,
  token: string | undefined,
  deps: EventProcessorDeps,
): Promise<TimerJobResult> {
  // The timers queue also holds the jobs of bursts.
  if (isBurstJobData(job.data)) return processBurstJob(job, token, deps);
  const parsed = TimerJobDataSchema.safeParse(job.data);
  if (!parsed.success) {
    // By path only: the data holds what customers wrote.
    throw new UnrecoverableError(
      `job ${job.id} does not hold a valid timer: ${describeIssuePaths(parsed.error.issues)}`,
    );
  }
  const data = parsed.data;
  const log = deps.log.child({
    conversationId: data.conversationId,
    eventKey: data.event.key,
    timerId: data.timerId,
  });

  if (data.replay === undefined) {
    const now = Date.now();
    const cut = data.cut ?? Number((await deps.redis.get(deps.keys.arrival)) ?? '0');
    const firstFiredAt = data.firstFiredAt ?? now;
    const head = await deps.redis.zrange(deps.keys.order(data.conversationId), 0, 0, 'WITHSCORES');
    const headArrival = head[1] === undefined ? Number.POSITIVE_INFINITY : Number(head[1]);
    if (headArrival <= cut && now - firstFiredAt < MAX_WAIT_FOR_EARLIER_EVENTS_MS) {
      await job.updateData({ ...data, cut, firstFiredAt });
      await job.moveToDelayed(now + ORDER_RECHECK_MS, token);
      throw new DelayedError();
    }
    const claim = await claimTimer(deps.redis, deps.keys, data.conversationId, data.timerId);
    if (claim === 'cancelled') {
      log.info('timer was cancelled before it fired');
      return { timerId: data.timerId, state: 'cancelled', actions: [] };
    }
  }

  const actions: ActionReport[] = [];
  // A dead letter keeps the timer's run state (its ledger) as long as itself, for a replay.
  const release = (keepRunSeconds = deps.ttls.deadLetterRunSeconds) =>
    releaseTimer(deps.redis, deps.keys, data.conversationId, data.timerId, keepRunSeconds);
  let state: RunState | undefined;
  try {
    let facts: Awaited<ReturnType<typeof loadFacts>>;
    [facts, state] = await Promise.all([
      loadFacts(deps.redis, deps.keys, data.conversationId),
      RunState.load(
        deps.redis,
        deps.keys.run(data.timerId),
        deps.keys.conversation(data.conversationId),
        deps.ttls.unfinishedRunSeconds,
      ),
    ]);
    const reports = await runPlannedActions(
      deps,
      {
        scope: data.timerId,
        event: data.event,
        conversationId: data.conversationId,
        facts,
        rules: deps.rules(),
        replay: data.replay !== undefined,
        state,
        log,
      },
      data.actions,
      actions,
    );
    await state.flush();
    await releaseTimer(
      deps.redis,
      deps.keys,
      data.conversationId,
      data.timerId,
      0,
      deps.story?.forTimer(deps.keys, data.conversationId, {
        event: data.event,
        timerId: data.timerId,
        rule: data.rule,
        actions: data.actions,
        reports,
      }),
    );
    log.info({ actions: reports.length }, 'timer fired');
    return { timerId: data.timerId, state: 'fired', actions: reports };
  } catch (error) {
    await state?.flush().catch(() => undefined);
    return handleJobFailure(job, error, deps.failurePolicy, {
      queue: 'timers',
      conversationId: data.conversationId,
      eventKey: data.event.key,
      actions,
      release,
    });
  }
}
