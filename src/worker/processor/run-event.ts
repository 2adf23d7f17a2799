import { lazyChild } from '../../observe/logger.js';
import type { BatchedEvent } from '../../queue/event-job.js';
import { scheduleBursts } from '../bursts/burst-job.js';
import { staleSentMarks } from '../exactly-once/sent-marks.js';
import { expiredTagFields } from '../exactly-once/tag-actions.js';
import type { ActionReport, FrozenPlan } from '../ports.js';
import { removeTimerJobs } from '../timers/timers.js';
import { leaveOrder } from './order-gate.js';
import { planEvent } from './plan-event.js';
import type { PreparedEvent } from './prepare-run.js';
import type { ProcessorPorts } from './processor-deps.js';
import { runJob } from './run-job.js';

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
 * cancelled go, then the run's skeleton (run-job.ts): its plan is frozen (plan-event.ts), its
 * actions run through the ledger (exactly-once/action-life.ts), and it leaves its conversation's
 * order with what the run learnt (its release). `actions` collects the reports as they happen.
 */
export async function runEvent(
  item: BatchedEvent,
  me: string,
  prepared: PreparedEvent,
  deps: ProcessorPorts,
  actions: ActionReport[],
  replay: boolean,
): Promise<EventRunResult> {
  const { event } = item;
  const conversationId = event.conversationId ?? '';
  const log = lazyChild(deps.observe.log, () => ({ conversationId, eventKey: event.key }));
  if (prepared.gate.released) {
    log.warn(
      { released: prepared.gate.released },
      'dropped a vanished or failed job that blocked this conversation',
    );
  }
  const cancelledTimers = prepared.cancelledTimers;
  if (cancelledTimers.length > 0) {
    await removeTimerJobs(deps.store.timersQueue, cancelledTimers);
    log.info({ cancelledTimers }, 'cancelled timers');
  }
  // A customer message that began a burst of a debounced rule adds its job.
  if (prepared.startedBursts.length > 0) {
    await scheduleBursts(
      deps.store.timersQueue,
      deps.store.keys,
      event,
      prepared.startedBursts,
      prepared.burstRules,
    );
  }

  const rules = deps.rules();
  // The platform's report of our own send: it is not a human agent's reply (exactly-once/own-sends.ts).
  if (prepared.ownSend)
    log.info({ kind: event.kind }, "the bridge's own message reported back: no rules run");
  let frozen: FrozenPlan | undefined;
  return runJob(
    deps,
    {
      load: async () => prepared,
      plan: async () => {
        const plan = await planEvent(event, conversationId, prepared, rules, deps);
        frozen = plan;
        // The facts the plan was made with (planning may have learnt from history).
        const run = {
          scope: event.key,
          event,
          conversationId,
          facts: prepared.facts,
          rules,
          replay,
          state: prepared.state,
          log,
        };
        return { run, actions: plan.actions };
      },
      release: async ({ facts, state }, reports) => {
        // Stale sent-text marks, expired tags and the run's untags go with the write of the leave.
        const stale = [
          ...staleSentMarks(facts, deps.clock.settings.reconcileSkewMs),
          ...expiredTagFields(facts, deps.clock.now().getTime()),
          ...state.takeConversationRemovals(),
        ];
        // The conversation's story goes with the same script (no command of its own).
        const story =
          frozen &&
          deps.observe.story?.forEvent(deps.store.keys, {
            event,
            plan: frozen,
            evaluated: prepared.evaluated,
            reports,
            cancelledTimers,
            lastCustomerMessageAt: facts.lastCustomerMessageAt,
            rules,
            ownSend: prepared.ownSend,
          });
        await leaveOrder(
          deps.store,
          event,
          me,
          0,
          state.takeConversationFields(),
          stale,
          prepared.newConversation ? deps.store.ttls.conversationSeconds : 0,
          story,
        );
        if (log.isLevelEnabled('debug')) log.debug({ actions: reports.length }, 'event processed');
        return {
          eventKey: event.key,
          matched: frozen?.matched.map((m) => m.rule) ?? [],
          actions: reports,
          cancelledTimers,
          ...(prepared.ownSend ? { ownSend: true as const } : {}),
        };
      },
      // The batch decides what follows (process-event.ts settleFailedRuns).
      fail: (error) => Promise.reject(error),
    },
    actions,
  );
}
