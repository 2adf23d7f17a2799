import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { WorkerSettings } from '../../config/config-schema.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
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
  /** Set when `record.enabled`: keeps the event with its facts and plan (issue 15). */
  recorder?: EventRecorder;
  /** Evaluates the shadow rules beside the plan, when the business has them (issue 28). */
  shadow?: ShadowObserver;
}

/**
 * The processor contexts of one shard's batch (issue 26): a batch may hold the events of several
 * businesses, each run with its business's context. A bridge of one business has one (`of(null)`).
 */
export interface BatchDeps {
  /** What every event of the batch shares: the queues, Redis, slots, settings, log. */
  readonly shared: EventProcessorDeps;
  /** The context of a business's events; undefined when this worker does not serve the business. */
  of(business: string | null): EventProcessorDeps | undefined;
  /** The business's gate (pauses, fair share) in a bridge of several businesses; undefined otherwise. */
  gateOf(business: string | null): BusinessGate | undefined;
  /**
   * A job whose events wait for a business this worker does not serve: `wake` promotes it once the
   * business is added (hot reload).
   */
  onBusinessAdded(business: string, wake: () => void): void;
}

/** The batch contexts of a bridge of one business. */
export function oneBusiness(deps: EventProcessorDeps): BatchDeps {
  return {
    shared: deps,
    of: (business) => (business === null ? deps : undefined),
    gateOf: () => undefined,
    onBusinessAdded: () => undefined,
  };
}
