import { DelayedError, type Job, type Queue, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { ConversationEvent } from '../../events/conversation-event.js';
import { lazyChild } from '../../observe/logger.js';
import { traceEventRun } from '../../observe/trace-context.js';
import { type BatchedEvent, EventBatchDataSchema } from '../../queue/event-job.js';
import { type BridgeKeys, eventId, orderMember } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import {
  cooldownFields,
  FACTS_TTL_SECONDS,
  factsForEvaluation,
  learnFromHistory,
  type StoredFacts,
} from '../conversation-facts.js';
import { RUN_TTL_SECONDS, staleSentMarks } from '../exactly-once/execute-actions.js';
import { jobRetryDelay } from '../failures/backoff.js';
import type { PlatformErrorClassifier } from '../failures/classify-failure.js';
import {
  deadLetter,
  type FailurePolicyDeps,
  failureOf,
  pauseOnFailure,
} from '../failures/job-failure-policy.js';
import type {
  ActionReport,
  ConversationFacts,
  EventRecorder,
  ForwardPort,
  FrozenPlan,
  Plan,
  PlannedAction,
  PlatformPort,
  RulesPort,
  TimerScheduler,
} from '../ports.js';
import { removeTimerJobs } from '../timers/timers.js';
import type { EventSlots } from './event-slots.js';
import { checkOrderGate, leaveOrderGate, memberJobId } from './order-gate.js';
import { type PreparedEvent, prepareEvents } from './prepare-run.js';
import { runPlannedActions } from './run-planned-actions.js';

export interface EventProcessorSettings {
  /** Backoff between an event's failed runs (capped exponential, full jitter, see backoff.ts). */
  backoffBaseMs: number;
  backoffCapMs: number;
  safetyMarginMs: number;
  reconcileSkewMs: number;
  /** How long a job parked behind an earlier event of its conversation sleeps before looking again. */
  orderRecheckMs: number;
  /** How long a vanished or failed head may block its conversation before it is dropped. */
  ghostGraceMs: number;
}

export interface EventProcessorDeps {
  redis: RedisClient;
  keys: BridgeKeys;
  eventsQueue: Queue;
  timersQueue: Queue;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  rules: () => RulesPort;
  timers: TimerScheduler;
  /** Bounds the events run at once in this process (worker.concurrency). */
  slots: EventSlots;
  now: () => Date;
  settings: EventProcessorSettings;
  failurePolicy: FailurePolicyDeps;
  log: Logger;
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
  onPlan?: (plan: FrozenPlan, kind: string) => void;
  /** An event's run failed and will be retried. */
  onRetry?: () => void;
  /** Once per event, when its plan is first frozen (retries reuse it): exactly-once counts. */
  onPlanFrozen?: (plan: Plan) => void;
  /** Set when `record.enabled`: keeps the event with its facts and plan (issue 15). */
  recorder?: EventRecorder;
}

export interface EventRunResult {
  eventKey: string;
  conversationId: string;
  /** The rules that matched (from the frozen plan). */
  matched: string[];
  actions: ActionReport[];
  cancelledTimers: string[];
  /** The event reported a message the bridge sent itself: no rule ran (own-sends.ts, issue 16). */
  ownSend?: true;
}

export interface EventJobResult {
  /** Events of the batch run to completion (by this attempt or an earlier one). */
  events: EventRunResult[];
  /** Events found done already (an earlier attempt, or taken over by a redelivery). */
  skipped: number;
}

/** One event's run that stopped with an error (the job decides what follows, see below). */
class EventRunFailed extends Error {
  constructor(
    readonly item: BatchedEvent,
    readonly actions: ActionReport[],
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'EventRunFailed';
  }
}

type GroupOutcome = { kind: 'done' } | { kind: 'waiting'; item: BatchedEvent } | EventRunFailed;

/**
 * The processor of the `events` queue. A job carries a batch of events (one group commit of the
 * receiver); its conversations run side by side, the events of one conversation one after the
 * other, each:
 * 1. waits its turn in the conversation (order gate; prepare-run.ts reads everything a run needs
 *    for the whole batch in one round trip);
 * 2. evaluates the rules once and freezes the plan (a re-run uses the same plan, even if time or
 *    facts moved on, so "exactly once" is about one fixed list of actions);
 * 3. executes the plan through the ledger; 4. leaves the order, letting the next event go.
 * Events that must wait for an earlier event of another job park the job; an event whose run
 * failed is retried on its own attempts (the job parks until the earliest retry is due, and what
 * is done stays done) or, when final, is dead-lettered on its own.
 */
export async function processEventJob(
  job: Job,
  token: string | undefined,
  deps: EventProcessorDeps,
): Promise<EventJobResult> {
  const parsed = EventBatchDataSchema.safeParse(job.data);
  if (!parsed.success) {
    throw new UnrecoverableError(`job ${job.id} does not hold a valid event batch: ${parsed.error.message}`);
  }
  const { events: items } = parsed.data;
  const replay = parsed.data.replay !== undefined;
  const jobId = job.id ?? '';
  const prefix = `${deps.eventsQueue.qualifiedName}:`;
  const gateInput = {
    jobId,
    jobKeyPrefix: prefix,
    failedSet: `${deps.eventsQueue.qualifiedName}:failed`,
    ghostGraceMs: deps.settings.ghostGraceMs,
    replay,
  };
  const member = (item: BatchedEvent) => orderMember(jobId, item.event.key);
  const prepare = (list: readonly BatchedEvent[]) =>
    prepareEvents(deps.redis, deps.keys, {
      ...gateInput,
      now: Date.now(),
      events: list.map((item) => ({ event: item.event, member: member(item) })),
    });

  const groups = new Map<string, BatchedEvent[]>();
  for (const item of items) {
    const c = item.event.conversationId ?? '';
    const group = groups.get(c);
    if (group) group.push(item);
    else groups.set(c, [item]);
  }
  const first = await prepare(items);
  const preparedOf = new Map(items.map((item, i) => [item, first[i]]));
  const done: EventRunResult[] = (parsed.data.finished ?? []) as EventRunResult[];
  const finishedBefore = done.length;
  let skipped = 0;
  /** Failed runs per event key: each event has its own attempts (see the failure loop below). */
  const failures: Record<string, number> = { ...parsed.data.failures };
  let failuresChanged = false;
  let kept = false;
  /** Before the job parks or retries: what this attempt finished and which events failed go with it (one write, rare path). */
  const keepFinished = async () => {
    if (kept || (done.length === finishedBefore && !failuresChanged)) return;
    kept = true;
    await job.updateData({ ...parsed.data, finished: done, failures });
  };

  const runGroup = async (group: BatchedEvent[]): Promise<GroupOutcome> => {
    for (const item of group) {
      let outcome = preparedOf.get(item);
      // Chained behind an earlier event of this batch (which has just left): look again.
      if (outcome?.gate.kind === 'chain') outcome = (await prepare([item]))[0];
      if (!outcome) return { kind: 'waiting', item };
      if (outcome.gate.kind === 'skip') {
        skipped += 1;
        continue;
      }
      if (outcome.gate.kind !== 'go' || !('state' in outcome)) return { kind: 'waiting', item };
      const actions: ActionReport[] = [];
      try {
        const prepared = outcome;
        const run = () => runEvent(item, member(item), prepared, deps, actions, replay);
        // With tracing on, the run is the `event process` span of the webhook's trace (issue 14).
        done.push(await deps.slots.run(() => traceEventRun(item, run, eventSpanFacts)));
      } catch (error) {
        await outcome.state.flush().catch(() => undefined);
        return new EventRunFailed(item, actions, error);
      }
    }
    return { kind: 'done' };
  };
  const outcomes = await Promise.all([...groups.values()].map(runGroup));

  const runFailures = outcomes.filter((o): o is EventRunFailed => o instanceof EventRunFailed);
  const waiting = outcomes.flatMap((o) =>
    !(o instanceof EventRunFailed) && o.kind === 'waiting' ? [o.item] : [],
  );
  let retryInMs: number | undefined;
  let deadLettered = 0;
  const attempts = job.opts.attempts ?? 1;
  for (const failed of runFailures) {
    const failure = failureOf(failed.cause);
    // A 429 or a refusal of our credentials pauses everything; the job comes back unchanged.
    if (failure.kind === 'rate-limited' || failure.kind === 'auth') {
      await keepFinished();
      await pauseOnFailure(failure, deps.failurePolicy);
    }
    const event = failed.item.event;
    const tries = (failures[event.key] ?? 0) + 1;
    if (failure.kind !== 'rejected' && tries < attempts) {
      // The job retries on its own schedule rather than BullMQ's attempts: those are shared by the
      // whole batch, and one event's bad luck must not use up its neighbours' attempts.
      failures[event.key] = tries;
      failuresChanged = true;
      const delay = jobRetryDelay(tries, deps.settings.backoffBaseMs, deps.settings.backoffCapMs);
      retryInMs = Math.min(retryInMs ?? delay, delay);
      deps.onRetry?.();
      deps.log.warn(
        {
          jobId,
          conversationId: event.conversationId,
          eventKey: event.key,
          attempt: tries,
          err: failure.message,
        },
        `event will be retried in ${Math.round(delay / 100) / 10} s`,
      );
      continue;
    }
    const conversationId = event.conversationId ?? '';
    await deadLetter(job, failure, deps.failurePolicy, {
      attempts: tries,
      queue: 'events',
      conversationId,
      eventKey: event.key,
      actions: failed.actions,
      data: { events: [failed.item] },
      idSuffix: eventId(event.key).slice(0, 8),
      release: () => leave(deps, failed.item.event, member(failed.item), RUN_TTL_SECONDS, {}, []),
    });
    deadLettered += 1;
  }
  if (retryInMs !== undefined || waiting.length > 0) {
    await keepFinished();
    const recheck = waiting.length > 0 ? deps.settings.orderRecheckMs : Number.POSITIVE_INFINITY;
    await job.moveToDelayed(Date.now() + Math.min(retryInMs ?? recheck, recheck), token);
    // A head may have left between the check and the park: look once more, and if it is our
    // turn now, promote ourselves instead of sleeping a full recheck period.
    const kinds =
      waiting.length === 0
        ? []
        : await checkOrderGate(deps.redis, {
            ...gateInput,
            dedupePrefix: deps.keys.dedupePrefix,
            now: Date.now(),
            events: waiting.map((item) => ({
              orderKey: deps.keys.order(item.event.conversationId ?? ''),
              member: member(item),
            })),
          });
    if (kinds.some((kind) => kind !== 'wait')) await job.promote().catch(() => undefined);
    throw new DelayedError();
  }
  if (deadLettered > 0) {
    throw new UnrecoverableError(`${deadLettered} event(s) of this batch were dead-lettered`);
  }
  return { events: done, skipped };
}

/** One event's run, from its prepared state to leaving the order. */
async function runEvent(
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
  let facts: StoredFacts = prepared.facts;
  const cancelledTimers = prepared.cancelledTimers;
  if (cancelledTimers.length > 0) {
    await removeTimerJobs(deps.timersQueue, cancelledTimers);
    log.info({ cancelledTimers }, 'cancelled timers');
  }

  const rules = deps.rules();
  // The platform's report of our own send: it is not a human agent's reply (own-sends.ts).
  if (prepared.ownSend)
    log.info({ kind: event.kind }, "the bridge's own message reported back: no rules run");
  // What the plan was evaluated with, for the recorder (undefined when a frozen plan was read back).
  let evaluated: { now: Date; facts: ConversationFacts; blocked: string[] } | undefined;
  const plan = await frozenPlan(
    prepared,
    prepared.ownSend,
    async () => {
      const now = deps.now();
      let planned = rules.evaluate(event, factsForEvaluation(facts, event), now);
      const needsHistory =
        (event.kind !== 'message_in' &&
          !facts.lastCustomerMessageAt &&
          planned.actions.some(dependsOnWindow)) ||
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
        planned = rules.evaluate(event, factsForEvaluation(facts, event), now);
      }
      if (deps.recorder) {
        const blocked = planned.blockedReplies.map((b) => b.actionId);
        evaluated = { now, facts: factsForEvaluation(facts, event), blocked };
      }
      return planned;
    },
    deps.onPlanFrozen,
  );
  deps.onPlan?.(plan, event.kind);
  if (evaluated) deps.recorder?.record({ event, plan, ...evaluated });
  for (const [field, value] of Object.entries(cooldownFields(plan, deps.now()))) {
    prepared.state.stageConversation(field, value);
  }

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
  const stale = staleSentMarks(facts, deps.settings.reconcileSkewMs);
  await leave(
    deps,
    event,
    me,
    0,
    prepared.state.takeConversationFields(),
    stale,
    prepared.newConversation ? FACTS_TTL_SECONDS : 0,
  );
  if (log.isLevelEnabled('debug')) log.debug({ actions: reports.length }, 'event processed');
  return {
    eventKey: event.key,
    conversationId,
    matched: plan.matched.map((m) => m.rule),
    actions: reports,
    cancelledTimers,
    ...(prepared.ownSend ? { ownSend: true as const } : {}),
  };
}

function eventSpanFacts(result: EventRunResult) {
  return { rules: result.matched, actions: result.actions.length };
}

/**
 * Leaves the conversation's order (see order-gate.ts) and wakes the next event's job when it is
 * parked. The next event of the same batch is run by the batch itself.
 */
async function leave(
  deps: EventProcessorDeps,
  event: ConversationEvent,
  me: string,
  keepRunSeconds: number,
  set: Record<string, string>,
  remove: readonly string[],
  conversationTtlSeconds = 0,
): Promise<void> {
  const c = event.conversationId ?? '';
  const next = await leaveOrderGate(deps.redis, {
    orderKey: deps.keys.order(c),
    conversationKey: deps.keys.conversation(c),
    runKey: deps.keys.run(event.key),
    delayedSet: `${deps.eventsQueue.qualifiedName}:delayed`,
    member: me,
    keepRunSeconds,
    conversationTtlSeconds,
    set,
    remove,
  });
  if (next?.parked && memberJobId(next.next) !== memberJobId(me)) {
    await (await deps.eventsQueue.getJob(memberJobId(next.next)))?.promote().catch(() => undefined);
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
 * The plan of an event, evaluated once; a re-run reads it back instead of evaluating again. It is
 * staged with the run's state and written with its first durable write (before the first outside
 * call that needs one). Only the actions and the matched rules are kept: serialising every rule's
 * outcome would cost O(rules) per event (see evaluate-rules.ts).
 */
async function frozenPlan(
  prepared: PreparedEvent,
  ownSend: boolean,
  evaluate: () => Promise<Plan>,
  onFrozen?: (plan: Plan) => void,
): Promise<FrozenPlan> {
  const stored = prepared.state.storedPlan;
  if (stored) return JSON.parse(stored) as FrozenPlan;
  if (ownSend) return { actions: [], matched: [] };
  const evaluated = await evaluate();
  const plan: FrozenPlan = {
    actions: evaluated.actions,
    matched: evaluated.matched.map((m) => ({ rule: m.rule, cooldownMs: m.cooldownMs })),
  };
  if (plan.actions.length > 0) prepared.state.stagePlan(JSON.stringify(plan));
  onFrozen?.(evaluated);
  return plan;
}
