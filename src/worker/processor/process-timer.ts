import { type Job, UnrecoverableError } from 'bullmq';
import { describeIssuePaths } from '../../base/issue-paths.js';
import { isBurstJobData } from '../bursts/burst-job.js';
import { handleJobFailure } from '../failures/job-failure-policy.js';
import { claimTimer, releaseTimer, TimerJobDataSchema } from '../timers/timers.js';
import { ORDER_RECHECK_MS } from './order-gate.js';
import { processBurstJob } from './process-burst.js';
import type { ProcessorPorts } from './processor-deps.js';
import { loadRun, runJob, type ScheduledRunResult, waitForEarlierEvents } from './run-job.js';

export type TimerJobResult = ScheduledRunResult;

/**
 * The processor of the `timers` queue. A due timer first lets the events that reached the
 * receiver before it fired be processed (an agent reply still in the queue must be able to cancel
 * it), then claims its registration (or finds it cancelled) and runs its actions through the
 * ledger, like an event (run-job.ts).
 */
export async function processTimerJob(
  job: Job,
  token: string | undefined,
  deps: ProcessorPorts,
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
  const { store } = deps;
  const log = deps.observe.log.child({
    conversationId: data.conversationId,
    eventKey: data.event.key,
    timerId: data.timerId,
  });

  if (data.replay === undefined) {
    await waitForEarlierEvents(job, token, store, data, () => ORDER_RECHECK_MS);
    const claim = await claimTimer(store.redis, store.keys, data.conversationId, data.timerId);
    if (claim === 'cancelled') {
      log.info('timer was cancelled before it fired');
      return { timerId: data.timerId, state: 'cancelled', actions: [] };
    }
  }

  // A dead letter keeps the timer's run state (its ledger) as long as itself, for a replay.
  const release = (keepRunSeconds = store.ttls.deadLetterRunSeconds) =>
    releaseTimer(store.redis, store.keys, data.conversationId, data.timerId, keepRunSeconds);
  return runJob(deps, {
    load: () => loadRun(store, data.timerId, data.conversationId),
    plan: async ({ facts, state }) => ({
      run: {
        scope: data.timerId,
        event: data.event,
        conversationId: data.conversationId,
        facts,
        rules: deps.rules(),
        replay: data.replay !== undefined,
        state,
        log,
      },
      actions: data.actions,
    }),
    release: async ({ state }, reports) => {
      await state.flush();
      await releaseTimer(
        store.redis,
        store.keys,
        data.conversationId,
        data.timerId,
        0,
        deps.observe.story?.forTimer(store.keys, data.conversationId, {
          event: data.event,
          timerId: data.timerId,
          rule: data.rule,
          actions: data.actions,
          reports,
        }),
      );
      log.info({ actions: reports.length }, 'timer fired');
      return { timerId: data.timerId, state: 'fired', actions: reports };
    },
    fail: (error, actions) =>
      handleJobFailure(job, error, deps.jobs.failurePolicy, {
        queue: 'timers',
        conversationId: data.conversationId,
        eventKey: data.event.key,
        actions,
        release,
      }),
  });
}
