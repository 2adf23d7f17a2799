import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { WorkerSettings } from '../../config/config-schema.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { StoryWriter } from '../../story/story-writer.js';
import type { PlatformErrorClassifier } from '../failures/classify-failure.js';
import type { FailurePolicyDeps } from '../failures/job-failure-policy.js';
import type {
  ActionReport,
  EventRecorder,
  ForwardPort,
  FrozenPlan,
  Plan,
  PlannedAction,
  PlatformPort,
  RulesPort,
  TimerScheduler,
} from '../ports.js';
import type { ShadowObserver } from '../shadow/shadow-observer.js';
import type { StoreTtls } from '../store-ttls.js';
import type { BusinessGate } from './business-gate.js';
import type { EventSlots } from './event-slots.js';

/**
 * What both processors (process-event.ts, process-timer.ts) run with: one per shard (its keys and
 * queues), built once by create-bridge-worker.ts; everything else (slots, rules...) is shared.
 */
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
  /** The `worker:` section as validated (backoff between an event's failed runs, safety margin, skew). */
  settings: WorkerSettings;
  /** The expiries of the keys the runs write (from `retention:`; store-ttls.ts). */
  ttls: StoreTtls;
  failurePolicy: FailurePolicyDeps;
  log: Logger;
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
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

/**
 * What every event of one shard's batch shares, whatever its business: Redis, the shard's events
 * queue, its event keys (dedupe markers, run state, arrival; the same for every naming) and the
 * expiries of the keys the runs write.
 */
export interface BatchShared {
  readonly redis: RedisClient;
  readonly keys: BridgeKeys;
  readonly eventsQueue: Queue;
  readonly ttls: StoreTtls;
}

/**
 * The processor contexts of one shard's batch: a batch may hold the events of several businesses,
 * each run with the context of the business that holds its naming (by the naming's tag,
 * events/business-naming.ts).
 */
export interface BatchDeps {
  /** What every event of the batch shares, whatever its business. */
  readonly shared: BatchShared;
  /** The context of a naming's events; undefined when no business here holds the naming. */
  of(tag: string): EventProcessorDeps | undefined;
  /** The gate (pauses, fair share) of the business holding a naming. */
  gateOf(tag: string): BusinessGate | undefined;
  /**
   * A job parks with events of namings no business here holds: it is recorded, said, and promoted
   * once a business holds one of them (held-jobs.ts).
   */
  hold(job: Job, tags: readonly string[]): Promise<void>;
}
