import { lazyChild } from '../../observe/logger.js';
import type { BatchedEvent } from '../../queue/event-job.js';
import { scheduleBursts } from '../bursts/burst-job.js';
import { staleSentMarks } from '../exactly-once/execute-actions.js';
import { expiredTagFields } from '../exactly-once/tag-actions.js';
import type { ActionReport } from '../ports.js';
import { removeTimerJobs } from '../timers/timers.js';
import { leaveOrder } from './order-gate.js';
import { planEvent } from './plan-event.js';
import type { PreparedEvent } from './prepare-run.js';
import type { EventProcessorDeps } from './processor-deps.js';
import { runPlannedActions } from './run-planned-actions.js';

/**
 * What a batch job returns for each event it ran (kept with the job while `retention.done_events`
 * keeps done jobs, and in BullMQ's event stream): no conversation id, no text, so that what
 * customers wrote stays out of what BullMQ keeps.
 */
export interface EventRunResult {
  eventKey: string;
  /** The rules that matched (from the frozen plan). */
  matched: string[];
  actions: ActionReport[];
  cancelledTimers: string[];
  /** The event reported a message the bridge sent itself: no rule ran (exactly-once/own-sends.ts). */
  ownSend?: true;
}

/**
 * One event's run, from its prepared state (prepare-run.ts) to leaving the order: the timers it
 * cancelled go, its plan is frozen (plan-event.ts), its actions run through the ledger
 * (run-planned-actions.ts), and it leaves its conversation's order with what the run learnt.
 */
export async function runEvent(
  item: BatchedEvent,
  me: string,
  prepared: PreparedEvent,
  deps: EventProcessorDeps,
  actions: ActionReport[],
  replay: boolean,
): Promise<EventRunResult> {
  const { event } = item;
  const conversationId = event.conversationId ?? '';
  const log = lazyChild(deps.log, () => ({ conversationId, eventKey: event.key }));
  if (prepared.gate.released) {
    log.warn(
      { released: prepared.gate.released },
      'dropped a vanished or failed job that blocked this conversation',
    );
  }
  const cancelledTimers = prepared.cancelledTimers;
  if (cancelledTimers.length > 0) {
    await removeTimerJobs(deps.timersQueue, cancelledTimers);
    log.info({ cancelledTimers }, 'cancelled timers');
  }
  // A customer message that began a burst of a debounced rule adds its job.
  if (prepared.startedBursts.length > 0) {
    await scheduleBursts(deps.timersQueue, deps.keys, event, prepared.startedBursts, prepared.burstRules);
  }

  const rules = deps.rules();
  // The platform's report of our own send: it is not a human agent's reply (exactly-once/own-sends.ts).
  if (prepared.ownSend)
    log.info({ kind: event.kind }, "the bridge's own message reported back: no rules run");
  const plan = await planEvent(event, conversationId, prepared, rules, deps);
  // The facts the plan was made with (planning may have learnt from history).
  const facts = prepared.facts;

  const reports = await runPlannedActions(
    deps,
    {
      scope: event.key,
      event,
      conversationId,
      facts,
      rules,
      replay,
      state: prepared.state,
      log,
    },
    plan.actions,
    actions,
  );
  // Stale sent-text marks, expired tags and the run's untags go with the write of the leave.
  const stale = [
    ...staleSentMarks(facts, deps.settings.reconcileSkewMs),
    ...expiredTagFields(facts, deps.now().getTime()),
    ...prepared.state.takeConversationRemovals(),
  ];
  // The conversation's story goes with the same script (no command of its own).
  const story = deps.story?.forEvent(deps.keys, {
    event,
    plan,
    evaluated: prepared.evaluated,
    reports,
    cancelledTimers,
    lastCustomerMessageAt: facts.lastCustomerMessageAt,
    rules,
    ownSend: prepared.ownSend,
  });
  await leaveOrder(
    deps,
    event,
    me,
    0,
    prepared.state.takeConversationFields(),
    stale,
    prepared.newConversation ? deps.ttls.conversationSeconds : 0,
    story,
  );
  if (log.isLevelEnabled('debug')) log.debug({ actions: reports.length }, 'event processed');
  return {
    eventKey: event.key,
    matched: plan.matched.map((m) => m.rule),
    actions: reports,
    cancelledTimers,
    ...(prepared.ownSend ? { ownSend: true as const } : {}),
  };
}
