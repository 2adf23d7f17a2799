import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Burst } from '../../rules/burst.js';
import { type BurstJobData, BurstJobDataSchema } from '../bursts/burst-job.js';
import { claimBurst, readTakenBurst, releaseBurst } from '../bursts/burst-store.js';
import { cooldownFields, type StoredFacts } from '../conversation-facts.js';
import type { RunState } from '../exactly-once/run-state.js';
import { handleJobFailure } from '../failures/job-failure-policy.js';
import type { ConversationFacts, FrozenPlan, RulesPort } from '../ports.js';
import { ORDER_RECHECK_MS } from './order-gate.js';
import type { ProcessorPorts } from './processor-deps.js';
import { loadRun, runJob, type ScheduledRunResult, waitForEarlierEvents } from './run-job.js';

export type BurstJobResult = ScheduledRunResult;

/**
 * A burst's job when it comes due: like a timer, it first lets the events that reached
 * the receiver before it be processed (a customer message still queued joins the burst, an agent
 * reply cancels it), then claims the burst (bursts/burst-store.ts): not quiet long enough yet, it
 * sleeps until the new due time; gone, it ends. Then the rule is evaluated once on the burst, the
 * plan frozen in the burst's run state, and the actions run through the same ledger as an event's
 * (each exactly once; a reply is checked against the reply window right before it is sent).
 */
export async function processBurstJob(
  job: Job,
  token: string | undefined,
  deps: ProcessorPorts,
): Promise<BurstJobResult> {
  const parsed = BurstJobDataSchema.safeParse(job.data);
  if (!parsed.success) {
    throw new UnrecoverableError(`job ${job.id} does not hold a valid burst: ${parsed.error.message}`);
  }
  const data = parsed.data;
  const log = deps.observe.log.child({
    conversationId: data.conversationId,
    rule: data.rule,
    burstId: data.burstId,
  });
  const cancelled = (): BurstJobResult => ({ timerId: data.burstId, state: 'cancelled', actions: [] });

  let burst: Burst;
  if (data.replay === undefined) {
    await waitForEarlierEvents(job, token, deps.store, data, burstRecheckMs);
    const claim = await claimBurst(deps.store.redis, deps.store.keys, {
      conversationId: data.conversationId,
      rule: data.rule,
      burstId: data.burstId,
      settings: data,
      now: Date.now(),
      runSeconds: deps.store.ttls.unfinishedRunSeconds,
    });
    if (claim.kind === 'wait') {
      // A message extended the burst: sleep until the customer has been quiet long enough.
      if (data.cut !== undefined || data.firstFiredAt !== undefined) {
        const { cut: _cut, firstFiredAt: _first, ...rest } = data;
        await job.updateData(rest);
      }
      await job.moveToDelayed(claim.dueAt, token);
      throw new DelayedError();
    }
    if (claim.kind === 'unreadable') {
      throw new UnrecoverableError(`burst ${data.burstId} of rule ${data.rule} is not readable in Redis`);
    }
    if (claim.kind === 'cancelled') {
      log.info('burst was cancelled (or taken) before it was due');
      return cancelled();
    }
    burst = claim.burst;
  } else {
    const taken = await readTakenBurst(deps.store.redis, deps.store.keys, data.burstId);
    if (!taken) {
      log.warn('replay of a burst whose messages are no longer kept: nothing to do');
      return cancelled();
    }
    burst = taken.burst;
  }
  return runBurst(job, deps, data, burst, log);
}

/** The burst's plan (evaluated once, then read back) and its actions through the ledger (run-job.ts). */
function runBurst(
  job: Job,
  deps: ProcessorPorts,
  data: BurstJobData,
  burst: Burst,
  log: ProcessorPorts['observe']['log'],
): Promise<BurstJobResult> {
  const { store } = deps;
  let matched = 0;
  // A dead letter keeps the burst's run state (the burst, its ledger) as long as itself, for a replay.
  const release = (keepRunSeconds = store.ttls.deadLetterRunSeconds) =>
    releaseBurst(store.redis, store.keys, data.burstId, keepRunSeconds);
  return runJob(deps, {
    load: () => loadRun(store, data.burstId, data.conversationId),
    plan: async ({ facts, state }) => {
      const rules = deps.rules();
      const plan = burstPlan(deps, rules, data, burst, facts, state, log);
      matched = plan.matched.length;
      const run = {
        scope: data.burstId,
        event: burst.lastEvent,
        conversationId: data.conversationId,
        facts,
        rules,
        replay: data.replay !== undefined,
        state,
        log,
      };
      return { run, actions: plan.actions };
    },
    release: async ({ state }, reports) => {
      await state.flush();
      await release(0);
      log.info({ messages: burst.count, matched, actions: reports.length }, 'burst evaluated');
      return { timerId: data.burstId, state: 'fired', actions: reports };
    },
    fail: (error, actions) =>
      handleJobFailure(job, error, deps.jobs.failurePolicy, {
        queue: 'timers',
        conversationId: data.conversationId,
        eventKey: burst.lastEvent.key,
        actions,
        release,
      }),
  });
}

/** The burst's plan: read back when frozen, else evaluated once on the burst and frozen. */
function burstPlan(
  deps: ProcessorPorts,
  rules: RulesPort,
  data: BurstJobData,
  burst: Burst,
  facts: StoredFacts,
  state: RunState,
  log: ProcessorPorts['observe']['log'],
): FrozenPlan {
  let plan: FrozenPlan;
  if (state.storedPlan) plan = JSON.parse(state.storedPlan) as FrozenPlan;
  else {
    const now = deps.clock.now();
    const planned = rules.evaluateBurst(data.rule, burst, burstFacts(facts, burst), now);
    if (planned === null) log.warn('the rule is gone or no longer debounced (a reload): burst dropped');
    plan = {
      actions: planned?.actions ?? [],
      matched: planned?.matched.map((m) => ({ rule: m.rule, cooldownMs: m.cooldownMs })) ?? [],
    };
    if (plan.actions.length > 0) state.stagePlan(JSON.stringify(plan));
    if (planned) deps.observe.onPlanFrozen?.(planned);
    for (const [field, value] of Object.entries(cooldownFields(plan, now))) {
      state.stageConversation(field, value);
    }
  }
  deps.observe.onPlan?.(plan, 'message_in');
  return plan;
}

/** The facts a burst is judged with: first_message holds when it holds the conversation's first message. */
export function burstFacts(stored: StoredFacts, burst: Burst): ConversationFacts {
  return {
    lastCustomerMessageAt: stored.lastCustomerMessageAt,
    isFirstCustomerMessage: stored.firstEventKey === null || stored.firstEventKey === burst.firstEventKey,
    onceMarks: stored.onceMarks,
    cooldowns: stored.cooldowns,
    tags: stored.tags,
  };
}

/** The first recheck of a burst waiting for earlier events: they usually take milliseconds. */
const FIRST_RECHECK_MS = 100;

/**
 * A burst waiting for earlier events looks again soon (100 ms), then less often (half the time
 * waited so far, at most the order's recheck period), so that a customer who keeps writing does
 * not hold a burst seconds past its max_wait.
 */
function burstRecheckMs(waitedMs: number): number {
  return Math.min(ORDER_RECHECK_MS, Math.max(FIRST_RECHECK_MS, waitedMs / 2));
}
