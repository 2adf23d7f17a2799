import { Queue, type Worker } from 'bullmq';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { WorkerSettings } from '../config/config-schema.js';
import { bullmqTelemetry } from '../observe/trace-context.js';
import { bridgeJobOptions } from '../queue/job-options.js';
import { createKeyLayout, type KeyLayout, type QueueShard } from '../queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { type RedisTopology, singleRedis } from '../redis/redis-connection.js';
import { createShardWorkers } from './adapters/bullmq-workers.js';
import { WorkerConnections } from './adapters/worker-connections.js';
import { createWorkerMetrics, type WorkerMetrics } from './adapters/worker-metrics.js';
import type { PlatformErrorClassifier } from './failures/classify-failure.js';
import type { EventRecorder, ForwardPort, PlatformPort, RulesPort } from './ports.js';
import { createEventSlots } from './processor/event-slots.js';
import type { EventProcessorDeps } from './processor/processor-deps.js';
import { createTimerScheduler } from './timers/timers.js';

export interface BridgeWorkerOptions {
  /** One Redis by URL, or `topology` (Sentinel, Cluster) instead. */
  redisUrl?: string;
  topology?: RedisTopology;
  prefix: string;
  /** Queue shards and key tags; default: one untagged shard under `prefix`. */
  layout?: KeyLayout;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  /** The current rules (hot reload swaps what this returns). */
  rules: () => RulesPort;
  /**
   * The config's `worker:` section as validated (defaults from its schema; `parseWorkerSettings`
   * builds one from a partial section). `shards`: the shards this process consumes (null: all).
   */
  settings: WorkerSettings;
  logger?: Logger;
  registry?: Registry;
  metrics?: WorkerMetrics;
  now?: () => Date;
  /** Set when events are recorded (`record.enabled`): builds the recorder on the command connection. */
  makeRecorder?: (redis: RedisClient, keys: BridgeKeys) => EventRecorder;
}

/** The queues of one shard this process works on. */
export interface ShardQueues {
  shard: QueueShard;
  events: Queue;
  timers: Queue;
}

export interface BridgeWorker {
  /** The first consumed shard's queues (tools and tests of a one-shard bridge). */
  readonly eventsQueue: Queue;
  readonly timersQueue: Queue;
  /** Every shard's queues, consumed here or not (gauges, pauses, dead-letter replays). */
  readonly queues: readonly ShardQueues[];
  readonly layout: KeyLayout;
  readonly metrics: WorkerMetrics | undefined;
  /** Resolves once both workers are connected and taking jobs. */
  start(): Promise<void>;
  /** True while the workers run and are not paused. */
  isRunning(): boolean;
  /** Stops taking jobs, waits for in-flight jobs up to `graceMs`, then closes every connection. Idempotent. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Composition of the worker side: its connections (adapters/worker-connections.ts), every shard's
 * queues, one processor context per consumed shard (processor/processor-deps.ts), and the two
 * BullMQ workers (events, timers) of each consumed shard (adapters/bullmq-workers.ts).
 */
export function createBridgeWorker(options: BridgeWorkerOptions): BridgeWorker {
  const { settings } = options;
  const log = options.logger ?? pino({ level: 'silent' });
  const layout = options.layout ?? createKeyLayout({ prefix: options.prefix, shards: 1, tagged: false });
  const topology = options.topology ?? singleRedis(options.redisUrl ?? 'redis://127.0.0.1:6379');
  const shards = settings.shards;
  if (shards && !shards.some((index) => index >= 0 && index < layout.shards)) {
    // Before any connection is made, so that nothing is left open.
    throw new RangeError(
      `the worker consumes no shard: check worker.shards (${shards.join(', ')}); shards are numbered 0 to ${layout.shards - 1}`,
    );
  }
  const connections = new WorkerConnections(topology, log);
  const queues = openQueues(layout, connections.queues, settings);
  const consumed = shards ? queues.filter((q) => shards.includes(q.shard.index)) : queues;
  const metrics = options.metrics ?? (options.registry ? createWorkerMetrics(options.registry) : undefined);
  const allQueues = queues.flatMap((q) => [q.events, q.timers]);

  const shared = sharedProcessorDeps(options, connections.commands, layout, allQueues, metrics, log);
  const workers: Worker[] = [];
  for (const q of consumed) {
    // A shard's processor context: its keys and queues; everything else (slots, rules...) shared.
    const deps: EventProcessorDeps = {
      ...shared,
      keys: q.shard.keys,
      eventsQueue: q.events,
      timersQueue: q.timers,
      timers: createTimerScheduler(connections.commands, q.shard.keys, q.timers, options.now),
    };
    const tag = layout.shards > 1 ? `-${q.shard.index}` : '';
    const prefix = q.shard.queuePrefix;
    workers.push(...createShardWorkers({ deps, prefix, tag, connections, settings, metrics, log }));
  }
  const first = consumed[0] as ShardQueues;

  let closing: Promise<void> | undefined;
  return {
    eventsQueue: first.events,
    timersQueue: first.timers,
    queues,
    layout,
    metrics,
    async start() {
      for (const worker of workers) {
        worker
          .run()
          .catch((error: unknown) => log.error({ err: String(error) }, 'worker stopped unexpectedly'));
      }
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
    },
    isRunning() {
      return workers.every((worker) => worker.isRunning() && !worker.isPaused());
    },
    close(graceMs = 25_000) {
      closing ??= closeWorker(workers, allQueues, connections, graceMs, log);
      return closing;
    },
  };
}

/** Every shard's queues, consumed here or not, on one shared connection. */
function openQueues(layout: KeyLayout, connection: RedisClient, settings: WorkerSettings): ShardQueues[] {
  return layout.all.map((shard) => ({
    shard,
    events: new Queue(QUEUE_NAMES.events, { connection, prefix: shard.queuePrefix }),
    timers: new Queue(QUEUE_NAMES.timers, {
      connection,
      prefix: shard.queuePrefix,
      // Tracing on: a timer's job carries the context of the event that set it (issue 14).
      ...bullmqTelemetry(),
      defaultJobOptions: bridgeJobOptions({ attempts: settings.attempts }),
    }),
  }));
}

/**
 * What every shard's processor context shares: the command connection, the platform, rules and
 * forward ports, the event slots, the settings, the failure policy, and the hooks that feed the
 * metrics.
 */
function sharedProcessorDeps(
  options: BridgeWorkerOptions,
  redis: RedisClient,
  layout: KeyLayout,
  allQueues: Queue[],
  metrics: WorkerMetrics | undefined,
  log: Logger,
): Omit<EventProcessorDeps, 'keys' | 'eventsQueue' | 'timersQueue' | 'timers'> {
  const { settings } = options;
  return {
    redis,
    platform: options.platform,
    classifyPlatformError: options.classifyPlatformError,
    forwarder: options.forwarder,
    rules: options.rules,
    slots: createEventSlots(settings.concurrency),
    now: options.now ?? (() => new Date()),
    settings,
    failurePolicy: {
      redis,
      keys: layout.global,
      // A 429 or a credentials failure pauses every shard: they all call the same platform.
      queues: allQueues,
      settings,
      log,
      onPause: (reason) => {
        metrics?.pauses.inc({ reason });
        // The credentials alarm as a metric: 1 from the first 401/403 until a platform call succeeds
        // again (compose-worker.ts sets it back to 0). Found unset by the fault suite (scenario 4).
        if (reason === 'auth') metrics?.authFailing.set(1);
      },
      onDeadLetter: (entry) => metrics?.deadLetters.inc({ queue: entry.queue, code: entry.code }),
    },
    log,
    onRetry: () => metrics?.jobs.inc({ queue: 'events', outcome: 'retried' }),
    onAction: (report) => metrics?.actions.inc({ rule: report.rule, type: report.type, state: report.state }),
    onWindowBlocked: (action) => metrics?.windowBlocked.inc({ rule: action.rule }),
    onPlan: (plan, kind) => {
      for (const matched of plan.matched) metrics?.rulesMatched.inc({ rule: matched.rule, kind });
    },
    // Replies replaced by when_closed at planning time (issue 13); the ones blocked at sending
    // time are counted by onWindowBlocked.
    onPlanFrozen: (plan) => {
      for (const blocked of plan.blockedReplies) metrics?.windowBlocked.inc({ rule: blocked.rule });
    },
    ...(options.makeRecorder ? { recorder: options.makeRecorder(redis, layout.global) } : {}),
  };
}

/** Stops taking jobs, waits for in-flight jobs up to `graceMs` (0: not at all), then closes the queues and connections. */
async function closeWorker(
  workers: readonly Worker[],
  allQueues: readonly Queue[],
  connections: WorkerConnections,
  graceMs: number,
  log: Logger,
): Promise<void> {
  if (graceMs <= 0) {
    await Promise.all(workers.map((worker) => worker.close(true)));
    await Promise.allSettled(allQueues.map((queue) => queue.close()));
    await Promise.allSettled(connections.all().map((c) => c.quit()));
    return;
  }
  const drain = Promise.all(workers.map((worker) => worker.close()));
  const deadline = new Promise<'timeout'>((resolve) => setTimeout(resolve, graceMs, 'timeout').unref());
  if ((await Promise.race([drain.then(() => 'drained' as const), deadline])) === 'timeout') {
    log.warn({ graceMs }, 'in-flight jobs did not finish in time; forcing close (they will be retried)');
    await Promise.all(workers.map((worker) => worker.close(true)));
  }
  await Promise.allSettled(allQueues.map((queue) => queue.close()));
  await Promise.allSettled(connections.all().map((c) => c.quit()));
}
