import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { describeIssuePaths } from '../../base/issue-paths.js';
import { tagOfJob } from '../../events/business-naming.js';
import { traceEventRun } from '../../observe/trace-context.js';
import { type BatchedEvent, type EventBatchData, EventBatchDataSchema } from '../../queue/event-job.js';
import { eventId, orderMember } from '../../queue/redis-keys.js';
import { burstArg } from '../bursts/burst-store.js';
import { jobRetryDelay } from '../failures/backoff.js';
import { BusinessPaused, deadLetter, failureOf, pauseOnFailure } from '../failures/job-failure-policy.js';
import type { ActionReport } from '../ports.js';
import type { BusinessGate } from './business-gate.js';
import { GAVE_UP } from './event-slots.js';
import { checkOrderGate, GHOST_GRACE_MS, leaveOrder, ORDER_RECHECK_MS } from './order-gate.js';
import { type PrepareOutcome, prepareEvents } from './prepare-run.js';
import type { BatchDeps, BatchShared, ProcessorPorts } from './processor-deps.js';
import { type EventRunResult, runEvent } from './run-event.js';

export interface EventJobResult {
  /** Events of the batch run to completion (by this attempt or an earlier one). */
  events: EventRunResult[];
  /** Events found done already (an earlier attempt, or taken over by a redelivery). */
  skipped: number;
}

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
  deps: BatchDeps,
): Promise<EventJobResult> {
  const parsed = EventBatchDataSchema.safeParse(job.data);
  if (!parsed.success) {
    // By path only: the data holds what customers wrote.
    throw new UnrecoverableError(
      `job ${job.id} does not hold a valid event batch: ${describeIssuePaths(parsed.error.issues)}`,
    );
  }
  const batch = new EventBatch(job, deps, parsed.data);
  // Events of a business that is paused, or that this worker does not serve, wait without being
  // prepared; the others' needs are read for the whole batch in one round trip, then
  // the conversations run side by side, each conversation's events one after the other.
  const held: Held[] = [];
  const groups: BatchedEvent[][] = [];
  for (const group of batch.byConversation().values()) {
    const hold = batch.holdOf(group[0] as BatchedEvent);
    if (hold) held.push(hold);
    else groups.push(group);
  }
  const items = groups.flat();
  const first = items.length > 0 ? await batch.prepare(items) : [];
  const preparedOf = new Map(items.map((item, i) => [item, first[i]]));
  const outcomes = await Promise.all(groups.map((group) => batch.runGroup(group, preparedOf)));

  const runFailures = outcomes.filter((o): o is EventRunFailed => o instanceof EventRunFailed);
  const waiting: BatchedEvent[] = [];
  for (const outcome of outcomes) {
    if (outcome instanceof EventRunFailed || outcome.kind === 'done') continue;
    if (outcome.kind === 'waiting') waiting.push(outcome.item);
    else held.push(outcome);
  }
  if (runFailures.length > 0) await settleFailedRuns(batch, runFailures);
  if (batch.retryInMs !== undefined || waiting.length > 0 || held.length > 0) {
    await park(batch, token, waiting, held);
  }
  if (batch.deadLettered > 0) {
    throw new UnrecoverableError(`${batch.deadLettered} event(s) of this batch were dead-lettered`);
  }
  return { events: batch.done, skipped: batch.skipped };
}

/** One event's run that stopped with an error (the job decides what follows, see settleFailedRuns). */
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

/** No room in a business's fair share (see EventBatch.runInSlots). */
const NO_ROOM = Symbol('no room');

/**
 * An event held back by its business: paused until a time, over its fair share here
 * (woken when one of the business's events finishes), or of a business this worker does not serve.
 */
type Held =
  | { kind: 'paused'; item: BatchedEvent; until: number }
  | { kind: 'room'; item: BatchedEvent; gate: BusinessGate }
  | { kind: 'unknown'; item: BatchedEvent; tag: string };

type GroupOutcome = { kind: 'done' } | { kind: 'waiting'; item: BatchedEvent } | Held | EventRunFailed;

/**
 * One attempt at a batch job: its events, what it has finished (by this attempt or an earlier
 * one), each event's failed runs, and what it writes back before it parks or retries.
 */
class EventBatch {
  readonly items: BatchedEvent[];
  readonly replay: boolean;
  readonly jobId: string;
  /** The order gate's arguments for this job (prepare-run.ts, order-gate.ts). */
  readonly gateInput: {
    jobId: string;
    jobKeyPrefix: string;
    failedSet: string;
    ghostGraceMs: number;
    replay: boolean;
  };
  readonly done: EventRunResult[];
  private readonly finishedBefore: number;
  skipped = 0;
  /** Failed runs per event key: each event has its own attempts (see settleFailedRuns). */
  readonly failures: Record<string, number>;
  failuresChanged = false;
  private kept = false;
  /** This job's own events per business gate, running or waiting for a slot (runInSlots). */
  private readonly ownRunning = new Map<BusinessGate, { count: number }>();
  /** When the earliest retry of a failed event is due (ms from now); undefined when none. */
  retryInMs: number | undefined;
  deadLettered = 0;

  /** What every event of the batch shares (its events queue, Redis, event keys, expiries). */
  readonly deps: BatchShared;

  constructor(
    readonly job: Job,
    readonly batchDeps: BatchDeps,
    private readonly data: EventBatchData,
  ) {
    this.deps = batchDeps.shared;
    const deps = this.deps;
    this.items = data.events;
    this.replay = data.replay !== undefined;
    this.jobId = job.id ?? '';
    const prefix = `${deps.eventsQueue.qualifiedName}:`;
    this.gateInput = {
      jobId: this.jobId,
      jobKeyPrefix: prefix,
      failedSet: `${deps.eventsQueue.qualifiedName}:failed`,
      ghostGraceMs: GHOST_GRACE_MS,
      replay: this.replay,
    };
    this.done = (data.finished ?? []) as EventRunResult[];
    this.finishedBefore = this.done.length;
    this.failures = { ...data.failures };
  }

  /** The event's member in its conversation's order (queue/redis-keys.ts orderMember). */
  member(item: BatchedEvent): string {
    return orderMember(this.jobId, item.event.key);
  }

  /**
   * The context of the business holding an event's naming. Only events that `holdOf` let through
   * get here: one of a naming no business holds is held before anything runs for it.
   */
  depsOf(item: BatchedEvent): ProcessorPorts {
    const deps = this.batchDeps.of(tagOfJob(item.business));
    if (deps === undefined) {
      throw new Error(
        `event ${item.event.key}: no business here holds its naming, and it was not held back first (a bug: holdOf decides before an event is prepared)`,
      );
    }
    return deps;
  }

  prepare(list: readonly BatchedEvent[]): Promise<PrepareOutcome[]> {
    return prepareEvents(this.deps.redis, this.deps.keys, {
      ...this.gateInput,
      now: Date.now(),
      ttls: this.deps.ttls,
      events: list.map((item) => {
        const deps = this.depsOf(item);
        const burst = burstArg(item.event, deps.rules().bursts);
        return {
          event: item.event,
          member: this.member(item),
          keys: deps.store.keys,
          ...(burst !== undefined ? { burst } : {}),
        };
      }),
    });
  }

  /** Why an event's business holds it back before anything is read for it, if it does. */
  holdOf(item: BatchedEvent): Held | undefined {
    const tag = tagOfJob(item.business);
    const deps = this.batchDeps.of(tag);
    if (deps === undefined) return { kind: 'unknown', item, tag };
    const gate = deps.jobs.gate;
    if (gate.isPaused()) return { kind: 'paused', item, until: gate.pausedUntil };
    return undefined;
  }

  /** The batch's events by conversation (of a naming: the same id in two businesses is two), in the batch's order. */
  byConversation(): Map<string, BatchedEvent[]> {
    const groups = new Map<string, BatchedEvent[]>();
    for (const item of this.items) {
      const c = `${tagOfJob(item.business)}\u0000${item.event.conversationId ?? ''}`;
      const group = groups.get(c);
      if (group) group.push(item);
      else groups.set(c, [item]);
    }
    return groups;
  }

  /** Runs one conversation's events in turn, each when the order gate lets it. */
  async runGroup(
    group: BatchedEvent[],
    preparedOf: Map<BatchedEvent, PrepareOutcome | undefined>,
  ): Promise<GroupOutcome> {
    const deps = this.depsOf(group[0] as BatchedEvent);
    const gate = deps.jobs.gate;
    for (const item of group) {
      let outcome = preparedOf.get(item);
      // Chained behind an earlier event of this batch (which has just left): look again.
      if (outcome?.gate.kind === 'chain') outcome = (await this.prepare([item]))[0];
      if (!outcome) return { kind: 'waiting', item };
      if (outcome.gate.kind === 'skip') {
        this.skipped += 1;
        continue;
      }
      if (outcome.gate.kind !== 'go' || !('state' in outcome)) return { kind: 'waiting', item };
      // Its business paused meanwhile.
      if (gate.isPaused()) return { kind: 'paused', item, until: gate.pausedUntil };
      const actions: ActionReport[] = [];
      const prepared = outcome;
      const run = () => runEvent(item, this.member(item), prepared, deps, actions, this.replay);
      let result: EventRunResult | typeof NO_ROOM;
      try {
        // With tracing on, the run is the `event process` span of the webhook's trace.
        result = await this.runInSlots(deps.jobs, () => traceEventRun(item, run, eventSpanFacts));
      } catch (error) {
        // What the run knew is written already (run-job.ts).
        return new EventRunFailed(item, actions, error);
      }
      if (result === NO_ROOM) return { kind: 'room', item, gate };
      this.done.push(result);
    }
    return { kind: 'done' };
  }

  /**
   * Runs an event in one of the process's event slots, given to its business fairly
   * (event-slots.ts). When its business is stalled (at its share and hanging, business-gate.ts),
   * the event gives up (NO_ROOM: at once when none of this job's own events of it runs, else once
   * waiting for a slot) and the job parks, so that a business whose platform hangs cannot hold
   * the job slots the others' batches need.
   */
  private async runInSlots<T>(
    { slots, gate }: ProcessorPorts['jobs'],
    task: () => Promise<T>,
  ): Promise<T | typeof NO_ROOM> {
    // Served alone, a business's events take the slots first come, first served.
    if (!gate.isolates) return slots.run(task);
    const own = this.ownOf(gate);
    if (own.count === 0 && gate.isStalled()) return NO_ROOM;
    own.count += 1;
    try {
      const outcome = await slots.run(task, gate);
      return outcome === GAVE_UP ? NO_ROOM : outcome;
    } finally {
      own.count -= 1;
    }
  }

  private ownOf(gate: BusinessGate): { count: number } {
    let own = this.ownRunning.get(gate);
    if (own === undefined) {
      own = { count: 0 };
      this.ownRunning.set(gate, own);
    }
    return own;
  }

  /** Before the job parks or retries: what this attempt finished and which events failed go with it (one write, rare path). */
  async keepFinished(): Promise<void> {
    if (this.kept || (this.done.length === this.finishedBefore && !this.failuresChanged)) return;
    this.kept = true;
    await this.job.updateData({ ...this.data, finished: this.done, failures: this.failures });
  }
}

function eventSpanFacts(result: EventRunResult) {
  return { rules: result.matched, actions: result.actions.length };
}

/**
 * The fate of each failed run: a 429 or a credentials failure pauses everything (the job comes
 * back unchanged); otherwise the event is retried on its own attempts (`batch.retryInMs`), or,
 * refused for good or out of attempts, dead-lettered on its own (`batch.deadLettered`).
 */
async function settleFailedRuns(batch: EventBatch, runFailures: readonly EventRunFailed[]): Promise<void> {
  const { job, failures } = batch;
  const attempts = job.opts.attempts ?? 1;
  for (const failed of runFailures) {
    const deps = batch.depsOf(failed.item);
    const failure = failureOf(failed.cause);
    // A 429 or a refusal of our credentials pauses everything; the job comes back unchanged. With
    // several businesses, it pauses the business alone: its events wait, no attempt used.
    if (failure.kind === 'rate-limited' || failure.kind === 'auth') {
      await batch.keepFinished();
      try {
        await pauseOnFailure(failure, deps.jobs.failurePolicy);
      } catch (error) {
        if (!(error instanceof BusinessPaused)) throw error;
        batch.retryInMs = Math.min(batch.retryInMs ?? error.ms, error.ms);
        continue;
      }
    }
    const event = failed.item.event;
    const tries = (failures[event.key] ?? 0) + 1;
    if (failure.kind !== 'rejected' && tries < attempts) {
      // The job retries on its own schedule rather than BullMQ's attempts: those are shared by the
      // whole batch, and one event's bad luck must not use up its neighbours' attempts.
      failures[event.key] = tries;
      batch.failuresChanged = true;
      const { backoff } = deps.clock.settings;
      const delay = jobRetryDelay(tries, backoff.baseMs, backoff.maxMs);
      batch.retryInMs = Math.min(batch.retryInMs ?? delay, delay);
      deps.observe.onRetry?.();
      deps.observe.log.warn(
        {
          jobId: batch.jobId,
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
    await deadLetter(job, failure, deps.jobs.failurePolicy, {
      attempts: tries,
      queue: 'events',
      conversationId,
      eventKey: event.key,
      actions: failed.actions,
      data: { events: [failed.item] },
      idSuffix: eventId(event.key).slice(0, 8),
      // The run's state (its ledger) lives as long as the dead letter, for a replay (store-ttls.ts).
      release: () =>
        leaveOrder(
          deps.store,
          failed.item.event,
          batch.member(failed.item),
          deps.store.ttls.deadLetterRunSeconds,
          {},
          [],
          0,
          deps.observe.story?.forDeadLetter(deps.store.keys, {
            event,
            reports: failed.actions,
            attempts: tries,
            error: failure.message,
          }),
        ),
    });
    batch.deadLettered += 1;
  }
}

/** How long a job held for room in its business's fair share sleeps unless woken first. */
const ROOM_RECHECK_MS = 10_000;
/**
 * How long a job with events of a naming no business here holds sleeps before it looks again: a
 * safety net only, since it is promoted as soon as a business holds the naming (held-jobs.ts).
 */
export const UNKNOWN_BUSINESS_RECHECK_MS = 5 * 60_000;

/**
 * Parks the job (delayed) until its earliest retry is due, when events wait for an earlier event
 * of another job for one recheck period, and when its business holds events back until the pause
 * ends, room frees or the business is served (woken early by whoever frees it); always throws
 * DelayedError.
 */
async function park(
  batch: EventBatch,
  token: string | undefined,
  waiting: readonly BatchedEvent[],
  held: readonly Held[] = [],
): Promise<never> {
  const { job, deps, retryInMs } = batch;
  await batch.keepFinished();
  const now = Date.now();
  let delay = Math.min(
    retryInMs ?? Number.POSITIVE_INFINITY,
    waiting.length > 0 ? ORDER_RECHECK_MS : Number.POSITIVE_INFINITY,
  );
  for (const hold of held) {
    const wait =
      hold.kind === 'paused'
        ? hold.until - now
        : hold.kind === 'room'
          ? ROOM_RECHECK_MS
          : UNKNOWN_BUSINESS_RECHECK_MS;
    delay = Math.min(delay, Math.max(0, wait));
  }
  await job.moveToDelayed(now + delay, token);
  const wake = () => void job.promote().catch(() => undefined);
  const unknown = new Set<string>();
  for (const hold of held) {
    if (hold.kind === 'room') hold.gate.onRoom(wake);
    else if (hold.kind === 'unknown') unknown.add(hold.tag);
  }
  if (unknown.size > 0) await batch.batchDeps.hold(job, [...unknown]);
  // A head may have left between the check and the park: look once more, and if it is our
  // turn now, promote ourselves instead of sleeping a full recheck period.
  const kinds =
    waiting.length === 0
      ? []
      : await checkOrderGate(deps.redis, {
          ...batch.gateInput,
          dedupePrefix: deps.keys.dedupePrefix,
          now: Date.now(),
          events: waiting.map((item) => ({
            orderKey: batch.depsOf(item).store.keys.order(item.event.conversationId ?? ''),
            member: batch.member(item),
          })),
        });
  if (kinds.some((kind) => kind !== 'wait')) await job.promote().catch(() => undefined);
  throw new DelayedError();
}
