import { DelayedError, type Job, type Queue, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { EventJobDataSchema } from '../queue/event-job.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { PlatformErrorClassifier } from './classify-failure.js';
import {
  factsForEvaluation,
  learnFromHistory,
  recordCooldowns,
  recordCustomerMessage,
  type StoredFacts,
} from './conversation-facts.js';
import type { ActionReport, TimerScheduler } from './execute-actions.js';
import { type FailurePolicyDeps, handleJobFailure } from './job-failure-policy.js';
import { enterOrderGate, leaveOrderGate } from './order-gate.js';
import type { ForwardPort, FrozenPlan, Plan, PlannedAction, PlatformPort, RulesPort } from './ports.js';
import { prepareRun } from './prepare-run.js';
import { runPlannedActions } from './run-planned-actions.js';
import { removeTimerJobs } from './timers.js';

export interface EventProcessorSettings {
  safetyMarginMs: number;
  reconcileSkewMs: number;
  /** How long a job parked behind an earlier event of its conversation sleeps before looking again. */
  orderRecheckMs: number;
  /** How long a vanished or failed head may block its conversation before it is dropped. */
  ghostGraceMs: number;
}

export interface EventProcessorDeps {
  redis: Redis;
  keys: BridgeKeys;
  eventsQueue: Queue;
  timersQueue: Queue;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  rules: () => RulesPort;
  timers: TimerScheduler;
  now: () => Date;
  settings: EventProcessorSettings;
  failurePolicy: FailurePolicyDeps;
  log: Logger;
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
  onPlan?: (plan: FrozenPlan, kind: string) => void;
  /** Once per event, when its plan is first frozen (retries reuse it): exactly-once counts. */
  onPlanFrozen?: (plan: Plan) => void;
}

export interface EventJobResult {
  conversationId: string;
  actions: ActionReport[];
  cancelledTimers: string[];
}

const PLAN_TTL_SECONDS = 8 * 24 * 3600;

/**
 * The processor of the `events` queue: one plain function per job, as BullMQ likes it.
 * 1. wait its turn in the conversation (order gate);
 * 2. update what is known about the conversation, cancel timers this event stops;
 * 3. evaluate the rules once and freeze the plan (a re-run uses the same plan, even if time or
 *    facts moved on, so "exactly once" is about one fixed list of actions);
 * 4. execute the plan through the ledger; 5. let the conversation's next event go.
 */
export async function processEventJob(
  job: Job,
  token: string | undefined,
  deps: EventProcessorDeps,
): Promise<EventJobResult> {
  const parsed = EventJobDataSchema.safeParse(job.data);
  if (!parsed.success) {
    throw new UnrecoverableError(`job ${job.id} does not hold a valid event: ${parsed.error.message}`);
  }
  const { event } = parsed.data;
  const conversationId = event.conversationId ?? '';
  const jobId = job.id ?? '';
  const log = deps.log.child({ conversationId, eventKey: event.key, jobId });
  const orderKey = deps.keys.order(conversationId);
  const gateKeys = {
    order: orderKey,
    ghostPrefix: deps.keys.ghostPrefix(conversationId),
    jobKeyPrefix: `${deps.eventsQueue.qualifiedName}:`,
    failedSet: `${deps.eventsQueue.qualifiedName}:failed`,
  };

  const prepared = await prepareRun(deps.redis, deps.keys, {
    conversationId,
    eventKey: event.key,
    jobId,
    kind: event.kind,
    jobKeyPrefix: gateKeys.jobKeyPrefix,
    failedSet: gateKeys.failedSet,
    now: Date.now(),
    ghostGraceMs: deps.settings.ghostGraceMs,
  });
  if (!('facts' in prepared)) {
    await job.moveToDelayed(Date.now() + deps.settings.orderRecheckMs, token);
    // The head may have finished between the check and the park: look once more, and if it is our
    // turn now, promote ourselves instead of sleeping a full recheck period.
    const again = await enterOrderGate(deps.redis, gateKeys, jobId, Date.now(), deps.settings.ghostGraceMs);
    if (again.kind === 'go') await job.promote().catch(() => undefined);
    throw new DelayedError();
  }
  if (prepared.gate.kind === 'go' && prepared.gate.released) {
    log.warn(
      { released: prepared.gate.released },
      'dropped a vanished or failed job that blocked this conversation',
    );
  }

  const delayedSet = `${deps.eventsQueue.qualifiedName}:delayed`;
  const release = async () => {
    const next = await leaveOrderGate(deps.redis, orderKey, delayedSet, jobId);
    if (next?.parked) await (await deps.eventsQueue.getJob(next.next))?.promote().catch(() => undefined);
  };
  const actions: ActionReport[] = [];
  try {
    let facts: StoredFacts = prepared.facts;
    if (event.kind === 'message_in') facts = await recordCustomerMessage(deps.redis, deps.keys, facts, event);
    const cancelledTimers = prepared.cancelledTimers;
    if (cancelledTimers.length > 0) {
      await removeTimerJobs(deps.timersQueue, cancelledTimers);
      log.info({ cancelledTimers }, 'cancelled timers');
    }

    const rules = deps.rules();
    const plan = await frozenPlan(deps, event.key, prepared.plan, async () => {
      const now = deps.now();
      let first = rules.evaluate(event, factsForEvaluation(facts, event), now);
      const needsHistory =
        (event.kind !== 'message_in' &&
          !facts.lastCustomerMessageAt &&
          first.actions.some(dependsOnWindow)) ||
        (rules.usesFirstMessage &&
          event.kind === 'message_in' &&
          !facts.historyChecked &&
          facts.firstEventKey === event.key);
      if (needsHistory) {
        const learned = await learnFromHistory(
          deps.redis,
          deps.keys,
          conversationId,
          deps.platform.history(conversationId),
          event.messageId,
        );
        facts = {
          ...facts,
          lastCustomerMessageAt: maxDate(facts.lastCustomerMessageAt, learned.lastCustomerMessageAt),
          historyChecked: true,
          firstEventKey:
            learned.earlierCustomerMessages > 0 && facts.firstEventKey === event.key
              ? 'history'
              : facts.firstEventKey,
        };
        first = rules.evaluate(event, factsForEvaluation(facts, event), now);
      }
      return first;
    });
    deps.onPlan?.(plan, event.kind);
    await recordCooldowns(deps.redis, deps.keys, conversationId, plan, deps.now());

    const reports = await runPlannedActions(
      deps,
      {
        scope: event.key,
        event,
        conversationId,
        facts,
        rules,
        replay: parsed.data.replay !== undefined,
        ledger: prepared.ledger,
        log,
      },
      plan.actions,
      actions,
    );
    await release();
    log.debug({ actions: reports.length }, 'event processed');
    return { conversationId, actions: reports, cancelledTimers };
  } catch (error) {
    return handleJobFailure(job, error, deps.failurePolicy, {
      queue: 'events',
      conversationId,
      eventKey: event.key,
      actions,
      release,
    });
  }
}

/**
 * A planned action whose presence depends on the reply window: a windowed reply, or the
 * when_closed actions the evaluator put in a reply's place because it knew no customer message
 * (ids `<reply id>~closed.<n>`). Either way the last customer message must be known, from history
 * if need be, before the plan is frozen.
 */
function dependsOnWindow(action: PlannedAction): boolean {
  return (action.type === 'reply' && action.window.applies) || action.id.includes('~closed.');
}

function maxDate(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}

/**
 * The plan of an event, evaluated once; a re-run reads it back instead of evaluating again.
 * Only the actions and the matched rules are kept: serialising every rule's outcome would cost
 * O(rules) per event (see evaluate-rules.ts).
 */
async function frozenPlan(
  deps: EventProcessorDeps,
  eventKey: string,
  stored: string | null,
  evaluate: () => Promise<Plan>,
): Promise<FrozenPlan> {
  if (stored) return JSON.parse(stored) as FrozenPlan;
  const evaluated = await evaluate();
  const plan: FrozenPlan = {
    actions: evaluated.actions,
    matched: evaluated.matched.map((m) => ({ rule: m.rule, cooldownMs: m.cooldownMs })),
  };
  const key = deps.keys.plan(eventKey);
  const written = await deps.redis.set(key, JSON.stringify(plan), 'EX', PLAN_TTL_SECONDS, 'NX');
  if (written === 'OK') {
    deps.onPlanFrozen?.(evaluated);
    return plan;
  }
  const winner = await deps.redis.get(key);
  return winner ? (JSON.parse(winner) as FrozenPlan) : plan;
}
