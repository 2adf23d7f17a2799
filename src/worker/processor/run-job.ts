import { DelayedError, type Job } from 'bullmq';
import { loadFacts, type StoredFacts } from '../conversation-facts.js';
import { runActions } from '../exactly-once/action-life.js';
import type { RunSubject } from '../exactly-once/execution-context.js';
import { RunState } from '../exactly-once/run-state.js';
import type { ActionReport, PlannedAction } from '../ports.js';
import { MAX_WAIT_FOR_EARLIER_EVENTS_MS } from './order-gate.js';
import type { ProcessorPorts, StorePort } from './processor-deps.js';

/**
 * The one skeleton of every run, an event's (run-event.ts), a fired timer's (process-timer.ts)
 * or a burst's (process-burst.ts): load what the run needs, plan it, run its actions through the
 * ledger (exactly-once/action-life.ts), then finish: write what it learnt and release what held
 * its place. A run that stops early writes what it knows (`flush`) and hands the error to its
 * processor's failure policy. What differs between the three is passed in (`RunSteps`); timers and
 * bursts also share the wait for earlier events (`waitForEarlierEvents`).
 */
export interface RunSteps<Loaded extends { state: RunState }, Result> {
  /** What the run needs: at least its state (its frozen plan and ledger). */
  load(): Promise<Loaded>;
  /** The run's subject and its actions (evaluated once and frozen, or fixed by its job). */
  plan(loaded: Loaded): Promise<{ run: RunSubject; actions: readonly PlannedAction[] }>;
  /** Writes what the run learnt and releases its place (the order, the timer or the burst). */
  release(loaded: Loaded, reports: ActionReport[]): Promise<Result>;
  /** The run stopped with an error: the actions reported so far are in `collected`. */
  fail(error: unknown, collected: ActionReport[]): Promise<Result>;
}

export async function runJob<Loaded extends { state: RunState }, Result>(
  ports: ProcessorPorts,
  steps: RunSteps<Loaded, Result>,
  /** Each action's report as it happens (so a failure policy sees what was done before a stop). */
  collected: ActionReport[] = [],
): Promise<Result> {
  let state: RunState | undefined;
  try {
    const loaded = await steps.load();
    state = loaded.state;
    const { run, actions } = await steps.plan(loaded);
    const reports = await runActions(ports, run, actions, collected);
    return await finishRun(steps, loaded, reports);
  } catch (error) {
    await state?.flush().catch(() => undefined);
    return steps.fail(error, collected);
  }
}

/**
 * The finish step of every run that went to its end, whichever processor ran it: the one place
 * where a run is over, with each action's fate (`reports`). What it learnt is written with the
 * release of its place (the order, the timer's registration or the burst).
 */
async function finishRun<Loaded extends { state: RunState }, Result>(
  steps: RunSteps<Loaded, Result>,
  loaded: Loaded,
  reports: ActionReport[],
): Promise<Result> {
  return steps.release(loaded, reports);
}

/** A timer's or a burst's run as it loads: the conversation's facts and the run's own state. */
export async function loadRun(
  store: StorePort,
  scope: string,
  conversationId: string,
): Promise<{ facts: StoredFacts; state: RunState }> {
  const [facts, state] = await Promise.all([
    loadFacts(store.redis, store.keys, conversationId),
    RunState.load(
      store.redis,
      store.keys.run(scope),
      store.keys.conversation(conversationId),
      store.ttls.unfinishedRunSeconds,
    ),
  ]);
  return { facts, state };
}

/** What a timer's or a burst's job returns (kept with the job, in BullMQ's event stream). */
export interface ScheduledRunResult {
  timerId: string;
  state: 'fired' | 'cancelled';
  actions: ActionReport[];
}

/** What a due timer or burst keeps in its job while it waits for earlier events. */
export interface WaitingData {
  conversationId: string;
  /** Arrival counter when it first came due: events that arrived before it are handled first. */
  cut?: number | undefined;
  firstFiredAt?: number | undefined;
}

/**
 * Events that reached the receiver before a timer or burst came due run first (an agent reply
 * still queued must be able to cancel it), for at most MAX_WAIT_FOR_EARLIER_EVENTS_MS: the job
 * parks while its conversation's head arrived before it, and looks again after `recheckMs` (given
 * how long it has waited so far); throws DelayedError when it parks.
 */
export async function waitForEarlierEvents(
  job: Job,
  token: string | undefined,
  store: StorePort,
  data: WaitingData,
  recheckMs: (waitedMs: number) => number,
): Promise<void> {
  const now = Date.now();
  const cut = data.cut ?? Number((await store.redis.get(store.keys.arrival)) ?? '0');
  const firstFiredAt = data.firstFiredAt ?? now;
  const head = await store.redis.zrange(store.keys.order(data.conversationId), 0, 0, 'WITHSCORES');
  const headArrival = head[1] === undefined ? Number.POSITIVE_INFINITY : Number(head[1]);
  if (headArrival <= cut && now - firstFiredAt < MAX_WAIT_FOR_EARLIER_EVENTS_MS) {
    await job.updateData({ ...data, cut, firstFiredAt });
    await job.moveToDelayed(now + recheckMs(now - firstFiredAt), token);
    throw new DelayedError();
  }
}
