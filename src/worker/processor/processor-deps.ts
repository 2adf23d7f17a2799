import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { StoryWriter } from '../../story/story-writer.js';
import type { ActionObserver, ActionPorts, ClockPort } from '../exactly-once/execution-context.js';
import type { FailurePolicyDeps } from '../failures/job-failure-policy.js';
import type { EventRecorder, FrozenPlan, Plan, RulesPort } from '../ports.js';
import type { ShadowObserver } from '../shadow/shadow-observer.js';
import type { StoreTtls } from '../store-ttls.js';
import type { BusinessGate } from './business-gate.js';
import type { EventSlots } from './event-slots.js';

export type { ActionPorts, ClockPort } from '../exactly-once/execution-context.js';

/** Where runs keep their state and the queues they add to: one shard's, as one business names it. */
export interface StorePort {
  redis: RedisClient;
  keys: BridgeKeys;
  /** The expiries of the keys the runs write (from `retention:`; store-ttls.ts). */
  ttls: StoreTtls;
  eventsQueue: Queue;
  timersQueue: Queue;
}

/** Who hears what happens: logs, metrics, records and shadow rules; none of it changes what runs. */
export interface ObservePort extends ActionObserver {
  log: Logger;
  onPlan?: (plan: FrozenPlan, kind: string) => void;
  /** An event's run failed and will be retried. */
  onRetry?: () => void;
  /** Once per event, when its plan is first frozen (retries reuse it): exactly-once counts. */
  onPlanFrozen?: (plan: Plan) => void;
  /** Set when `record.enabled`: keeps the event with its facts and plan. */
  recorder?: EventRecorder;
  /** Evaluates the shadow rules beside the plan, when the business has them. */
  shadow?: ShadowObserver;
  /** The conversations' stories (`story:`): their part of each finish step. */
  story?: StoryWriter;
}

/** How a business's jobs share the process and what a failure does to them. */
export interface JobControl {
  /** Bounds the events run at once in this process (worker.concurrency). */
  slots: EventSlots;
  /** The business's pauses and fair share (business-gate.ts). */
  gate: BusinessGate;
  failurePolicy: FailurePolicyDeps;
}

/**
 * What the processors (process-event.ts, process-timer.ts, process-burst.ts) run with, as a few
 * ports grouped by concern: one per business and shard, built once by businesses/business-table.ts.
 * Each group is handed on whole to the part that needs it.
 */
export interface ProcessorPorts {
  store: StorePort;
  /** The platform, forwards and timers: what an action reaches. */
  actions: ActionPorts;
  /** The business's rules as they are now (a hot reload swaps them). */
  rules: () => RulesPort;
  clock: ClockPort;
  observe: ObservePort;
  jobs: JobControl;
}

/**
 * What every event of one shard's batch shares, whatever its business: Redis, the shard's events
 * queue, its event keys (dedupe markers, run state, arrival; the same for every naming) and the
 * expiries of the keys the runs write.
 */
export type BatchShared = Readonly<Pick<StorePort, 'redis' | 'keys' | 'eventsQueue' | 'ttls'>>;

/**
 * The processor ports of one shard's batch: a batch may hold the events of several businesses,
 * each run with the ports of the business that holds its naming (by the naming's tag,
 * events/business-naming.ts).
 */
export interface BatchDeps {
  /** What every event of the batch shares, whatever its business. */
  readonly shared: BatchShared;
  /** The ports of a naming's events (with its business's gate); undefined when no business here holds the naming. */
  of(tag: string): ProcessorPorts | undefined;
  /**
   * A job parks with events of namings no business here holds: it is recorded, said, and promoted
   * once a business holds one of them (held-jobs.ts).
   */
  hold(job: Job, tags: readonly string[]): Promise<void>;
}
