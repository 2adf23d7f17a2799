import { type Job, Queue, Worker } from 'bullmq';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { bullmqTelemetry } from '../observe/trace-context.js';
import { bridgeJobOptions, type JobRetention } from '../queue/job-options.js';
import { createKeyLayout, type KeyLayout, type QueueShard } from '../queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisClient, type RedisTopology, singleRedis } from '../redis/redis-connection.js';
import { createWorkerMetrics, type WorkerMetrics } from './adapters/worker-metrics.js';
import { jobRetryDelay } from './failures/backoff.js';
import type { PlatformErrorClassifier } from './failures/classify-failure.js';
import type { FailurePolicySettings } from './failures/job-failure-policy.js';
import type { EventRecorder, ForwardPort, PlatformPort, RulesPort } from './ports.js';
import { createEventSlots } from './processor/event-slots.js';
import { processEventJob } from './processor/process-event.js';
import { processTimerJob } from './processor/process-timer.js';
import type { EventProcessorDeps, EventProcessorSettings } from './processor/processor-deps.js';
import { createTimerScheduler } from './timers/timers.js';

export interface BridgeWorkerSettings extends EventProcessorSettings, FailurePolicySettings {
  concurrency: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** How long a job's lock lives without renewal; a killed worker's job is retried after about this long. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Times a job may be recovered from a dead worker before BullMQ fails it (the order gate then skips it). */
  maxStalledCount: number;
  retention: JobRetention;
}

export const DEFAULT_WORKER_SETTINGS: BridgeWorkerSettings = {
  concurrency: 16,
  backoffBaseMs: 1_000,
  backoffCapMs: 300_000,
  lockDurationMs: 30_000,
  stalledIntervalMs: 15_000,
  maxStalledCount: 5,
  retention: { attempts: 8 },
  safetyMarginMs: 60_000,
  reconcileSkewMs: 5_000,
  orderRecheckMs: 2_000,
  ghostGraceMs: 30_000,
  rateLimitPauseCapMs: 60_000,
  authFailurePauseMs: 30_000,
};

export interface BridgeWorkerOptions {
  /** One Redis by URL, or `topology` (Sentinel, Cluster) instead. */
  redisUrl?: string;
  topology?: RedisTopology;
  prefix: string;
  /** Queue shards and key tags; default: one untagged shard under `prefix`. */
  layout?: KeyLayout;
  /** The shards this process consumes (default: all of the layout's). */
  shards?: readonly number[] | null;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  /** The current rules (hot reload swaps what this returns). */
  rules: () => RulesPort;
  settings?: Partial<BridgeWorkerSettings>;
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
 * Composition of the worker side: two BullMQ workers (events, timers) sharing one processor
 * context, their queues, a command connection, metrics and logging.
 */
export function createBridgeWorker(options: BridgeWorkerOptions): BridgeWorker {
  const settings = { ...DEFAULT_WORKER_SETTINGS, ...options.settings };
  const log = options.logger ?? pino({ level: 'silent' });
  const layout = options.layout ?? createKeyLayout({ prefix: options.prefix, shards: 1, tagged: false });
  const topology = options.topology ?? singleRedis(options.redisUrl ?? 'redis://127.0.0.1:6379');
  if (options.shards && !options.shards.some((index) => index >= 0 && index < layout.shards)) {
    // Before any connection is made, so that nothing is left open.
    throw new RangeError(
      `the worker consumes no shard: check worker.shards (${options.shards.join(', ')}); shards are numbered 0 to ${layout.shards - 1}`,
    );
  }
  // Workers need maxRetriesPerRequest: null (BullMQ production guide): they block on Redis and must
  // ride out Redis restarts instead of failing commands.
  const connect = (name: string) =>
    createRedisClient(topology, { maxRetriesPerRequest: null, connectionName: `convo-bridge:${name}` });
  // Auto-pipelining batches the many small commands of concurrent jobs into fewer writes.
  const redis = createRedisClient(topology, {
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
    connectionName: 'convo-bridge:worker-commands',
  });
  redis.on('error', (error) => log.warn({ err: error.message }, 'redis (worker commands) connection error'));
  const queueConnection = connect('worker-queues');
  queueConnection.on('error', () => {});
  const queues: ShardQueues[] = layout.all.map((shard) => ({
    shard,
    events: new Queue(QUEUE_NAMES.events, { connection: queueConnection, prefix: shard.queuePrefix }),
    timers: new Queue(QUEUE_NAMES.timers, {
      connection: queueConnection,
      prefix: shard.queuePrefix,
      // Tracing on: a timer's job carries the context of the event that set it (issue 14).
      ...bullmqTelemetry(),
      defaultJobOptions: bridgeJobOptions(settings.retention),
    }),
  }));
  const consumed = options.shards ? queues.filter((q) => options.shards?.includes(q.shard.index)) : queues;
  const metrics = options.metrics ?? (options.registry ? createWorkerMetrics(options.registry) : undefined);
  const allQueues = queues.flatMap((q) => [q.events, q.timers]);

  const base: Omit<EventProcessorDeps, 'keys' | 'eventsQueue' | 'timersQueue' | 'timers'> = {
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
  /** A shard's processor context: its keys and queues; everything else (slots, rules...) shared. */
  const depsOf = (q: ShardQueues): EventProcessorDeps => ({
    ...base,
    keys: q.shard.keys,
    eventsQueue: q.events,
    timersQueue: q.timers,
    timers: createTimerScheduler(redis, q.shard.keys, q.timers, options.now),
  });

  const workerConnections: RedisClient[] = [];
  const workerOptions = (name: string, prefix: string) => ({
    connection: (() => {
      const connection = connect(`worker-${name}`);
      connection.on('error', () => {});
      workerConnections.push(connection);
      return connection;
    })(),
    prefix,
    ...bullmqTelemetry(),
    concurrency: settings.concurrency,
    autorun: false,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    // Manual rate limiting (queue.rateLimit on 429/401) only takes effect when a limiter is set;
    // this one is far above any real rate, the platform budget itself is enforced per call.
    limiter: { max: 1_000_000, duration: 1_000 },
    settings: {
      backoffStrategy: (attemptsMade: number) =>
        jobRetryDelay(attemptsMade, settings.backoffBaseMs, settings.backoffCapMs),
    },
  });

  const track = (worker: Worker, queue: string) => {
    worker.on('completed', (job: Job) => {
      metrics?.jobs.inc({ queue, outcome: 'completed' });
      if (queue === 'events' && metrics && Array.isArray(job.data?.events)) {
        const now = Date.now();
        for (const item of job.data.events as { event?: { receivedAt?: unknown } }[]) {
          const at = item.event?.receivedAt;
          if (typeof at === 'string') metrics.eventLatency.observe((now - Date.parse(at)) / 1000);
        }
      }
    });
    worker.on('failed', (job: Job | undefined, error: Error) => {
      const outcome = error.name === 'UnrecoverableError' ? 'dead_lettered' : 'retried';
      metrics?.jobs.inc({ queue, outcome });
      if (outcome === 'retried') {
        const event = job?.data?.event ?? job?.data?.events?.[0]?.event;
        log.warn(
          {
            jobId: job?.id,
            events: Array.isArray(job?.data?.events) ? job.data.events.length : undefined,
            conversationId: event?.conversationId ?? job?.data?.conversationId,
            eventKey: event?.key,
            attempt: job?.attemptsMade,
            err: error.message,
          },
          `${queue} job will be retried`,
        );
      }
    });
    worker.on('error', (error: Error) => log.error({ err: error.message }, `${queue} worker error`));
  };

  const workers: Worker[] = [];
  for (const q of consumed) {
    const deps = depsOf(q);
    const tag = layout.shards > 1 ? `-${q.shard.index}` : '';
    const eventsWorker = new Worker(
      QUEUE_NAMES.events,
      (job, token) => processEventJob(job, token, deps),
      workerOptions(`events${tag}`, q.shard.queuePrefix),
    );
    const timersWorker = new Worker(
      QUEUE_NAMES.timers,
      (job, token) => processTimerJob(job, token, deps),
      workerOptions(`timers${tag}`, q.shard.queuePrefix),
    );
    track(eventsWorker, 'events');
    track(timersWorker, 'timers');
    workers.push(eventsWorker, timersWorker);
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
      closing ??= (async () => {
        if (graceMs <= 0) {
          await Promise.all(workers.map((worker) => worker.close(true)));
          await Promise.allSettled(allQueues.map((queue) => queue.close()));
          await Promise.allSettled([redis, queueConnection, ...workerConnections].map((c) => c.quit()));
          return;
        }
        const drain = Promise.all(workers.map((worker) => worker.close()));
        const deadline = new Promise<'timeout'>((resolve) => setTimeout(resolve, graceMs, 'timeout').unref());
        if ((await Promise.race([drain.then(() => 'drained' as const), deadline])) === 'timeout') {
          log.warn(
            { graceMs },
            'in-flight jobs did not finish in time; forcing close (they will be retried)',
          );
          await Promise.all(workers.map((worker) => worker.close(true)));
        }
        await Promise.allSettled(allQueues.map((queue) => queue.close()));
        await Promise.allSettled([redis, queueConnection, ...workerConnections].map((c) => c.quit()));
      })();
      return closing;
    },
  };
}
