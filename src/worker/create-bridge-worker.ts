import { Queue, type Worker } from 'bullmq';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { settleWithin } from '../base/settle-within.js';
import {
  parseRetentionSettings,
  parseStorySettings,
  type RetentionSettings,
  type StorySettings,
  type WorkerSettings,
} from '../config/config-schema.js';
import { SINGLE_BUSINESS_ID, SINGLE_BUSINESS_NAMING } from '../events/business-naming.js';
import { bullmqTelemetry } from '../observe/trace-context.js';
import { bridgeJobOptions, eventStreamOptions } from '../queue/job-options.js';
import { createKeyLayout, type KeyLayout } from '../queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import { closeConnection } from '../redis/close-connection.js';
import type { RedisClient } from '../redis/redis-client.js';
import { type RedisTopology, singleRedis } from '../redis/redis-connection.js';
import { createStoryWriter } from '../story/story-writer.js';
import { createShardWorkers } from './adapters/bullmq-workers.js';
import { WorkerConnections } from './adapters/worker-connections.js';
import { type BusinessWorkerMetrics, createWorkerMetrics } from './adapters/worker-metrics.js';
import {
  type BusinessStatus,
  BusinessTable,
  type ShardQueues,
  type SharedWorkerParts,
} from './businesses/business-table.js';
import { type HeldCount, HeldJobs } from './businesses/held-jobs.js';
import type { WorkerBusiness } from './businesses/worker-business.js';
import type { PlatformErrorClassifier } from './failures/classify-failure.js';
import type { EventRecorder, ForwardPort, PlatformPort, RulesPort } from './ports.js';
import { createEventSlots } from './processor/event-slots.js';
import { type RetentionSweep, startRetentionSweep } from './retention-sweep.js';
import type { ShadowCandidate } from './shadow/shadow-observer.js';
import { storeTtls } from './store-ttls.js';
import { timerIdFor } from './timers/timers.js';

interface CommonWorkerOptions {
  /** One Redis by URL, or `topology` (Sentinel, Cluster) instead. */
  redisUrl?: string;
  topology?: RedisTopology;
  prefix: string;
  /** Queue shards and key tags; default: one untagged shard under `prefix`. */
  layout?: KeyLayout;
  /**
   * The config's `worker:` section as validated (defaults from its schema; `parseWorkerSettings`
   * builds one from a partial section). `shards`: the shards this process consumes (null: all).
   */
  settings: WorkerSettings;
  /**
   * The config's `retention:` section as validated (default: the schema's; `parseRetentionSettings`
   * builds one from a partial section): what the queues keep of done jobs, and the expiries of the
   * keys the runs write.
   */
  retention?: RetentionSettings;
  /** The config's `story:` section as validated (default: the schema's, stories on). */
  story?: StorySettings;
  logger?: Logger;
  registry?: Registry;
  /** Metrics labelled by business (default: registered on `registry`, when given). */
  metrics?: BusinessWorkerMetrics;
  now?: () => Date;
}

/**
 * The one business of a config without `businesses:` given by its parts, a shorthand for
 * `businesses: [{ id: 'default', naming: SINGLE_BUSINESS_NAMING, ... }]`.
 */
interface OneBusinessOptions {
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  /** The current rules (hot reload swaps what this returns). */
  rules: () => RulesPort;
  /** Set when events are recorded (`record.enabled`): builds the recorder on the command connection. */
  makeRecorder?: (redis: RedisClient, keys: BridgeKeys) => EventRecorder;
  /** The shadow rules in force (undefined while off, hot reload swaps what this returns). */
  shadow?: () => ShadowCandidate | undefined;
  businesses?: undefined;
}

/** The businesses served: each job runs with the context of the business holding its naming. */
interface BusinessesOptions {
  businesses: readonly WorkerBusiness[];
}

export type BridgeWorkerOptions = CommonWorkerOptions & (OneBusinessOptions | BusinessesOptions);

export type { ShardQueues };

export interface BridgeWorker {
  /** The first consumed shard's queues (tools and tests of a one-shard bridge). */
  readonly eventsQueue: Queue;
  readonly timersQueue: Queue;
  /** Every shard's queues, consumed here or not (gauges, pauses, dead-letter replays). */
  readonly queues: readonly ShardQueues[];
  readonly layout: KeyLayout;
  /** Resolves once both workers are connected and taking jobs. */
  start(): Promise<void>;
  /** True while the workers run and are not paused. */
  isRunning(): boolean;
  /**
   * Jobs this process's workers have finished (completed or failed) since it started: readiness
   * tells a stalled worker by it, now that done jobs are not kept in Redis to be counted.
   */
  finishedJobs(): number;
  /** Serve these businesses from now on (hot reload; see BusinessTable). */
  setBusinesses(businesses: readonly WorkerBusiness[]): void;
  /** The events and timers held for namings no business here holds, by naming tag (held-jobs.ts). */
  held(): { held: ReadonlyMap<string, HeldCount>; complete: boolean };
  /** Each business served: paused (for how long) and jobs running here. */
  businessStatus(): BusinessStatus[];
  /**
   * Stops taking jobs, waits for in-flight jobs up to `graceMs` (or until `redisGone` aborts), then
   * closes every connection; bounded whatever Redis does. Idempotent.
   */
  close(graceMs?: number, redisGone?: AbortSignal): Promise<void>;
}

/**
 * Composition of the worker side: its connections (adapters/worker-connections.ts), every shard's
 * queues, the businesses it serves with a processor context per consumed shard
 * (businesses/business-table.ts), and the two BullMQ workers (events, timers) of each consumed
 * shard (adapters/bullmq-workers.ts).
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
  const retention = options.retention ?? parseRetentionSettings();
  const connections = new WorkerConnections(topology, log);
  const queues = openQueues(layout, connections.queues, settings, retention);
  const consumed = shards ? queues.filter((q) => shards.includes(q.shard.index)) : queues;
  const allQueues = queues.flatMap((q) => [q.events, q.timers]);
  const shared: SharedWorkerParts = {
    redis: connections.commands,
    layout,
    allQueues,
    consumed,
    slots: createEventSlots(settings.concurrency),
    now: options.now ?? (() => new Date()),
    settings,
    ttls: storeTtls(retention),
    log,
  };
  shared.story = createStoryWriter(
    options.story ?? parseStorySettings(),
    retention,
    () => shared.now().getTime(),
    timerIdFor,
  );
  const metrics = options.metrics ?? (options.registry ? createWorkerMetrics(options.registry) : undefined);
  const held = new HeldJobs(connections.commands, layout.global, queues, log);
  const table = new BusinessTable(shared, metrics, businessesOf(options), held);
  const workers: Worker[] = [];
  const finished = { count: 0 };
  for (const q of consumed) {
    const tag = layout.shards > 1 ? `-${q.shard.index}` : '';
    const prefix = q.shard.queuePrefix;
    workers.push(
      ...createShardWorkers({
        table,
        shard: q.shard.index,
        prefix,
        tag,
        connections,
        settings,
        retention,
        onFinished: () => {
          finished.count += 1;
        },
        log,
      }),
    );
  }
  // Started with the workers: nothing touches Redis before the key layout is checked.
  let sweep: RetentionSweep | undefined;
  const first = consumed[0] as ShardQueues;

  let closing: Promise<void> | undefined;
  return {
    eventsQueue: first.events,
    timersQueue: first.timers,
    queues,
    layout,
    async start() {
      for (const worker of workers) {
        worker
          .run()
          .catch((error: unknown) => log.error({ err: String(error) }, 'worker stopped unexpectedly'));
      }
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
      // Said at start: what waits in Redis for a business this config does not have.
      void table.recountHeld();
      if (closing === undefined) {
        sweep ??= startRetentionSweep(
          connections.queues,
          consumed.flatMap((q) => [q.events, q.timers]),
          retention,
          log,
        );
      }
    },
    isRunning() {
      return workers.every((worker) => worker.isRunning() && !worker.isPaused());
    },
    finishedJobs: () => finished.count,
    setBusinesses(businesses) {
      table.set(businesses);
      void table.recountHeld();
    },
    held: () => held.snapshot(),
    businessStatus: () => table.status(),
    close(graceMs = 25_000, redisGone?: AbortSignal) {
      sweep?.stop();
      closing ??= closeWorker(workers, allQueues, connections, graceMs, log, redisGone, () =>
        table.flushShadow(),
      );
      return closing;
    },
  };
}

/** The businesses of the options: as given, or the one their parts describe. */
function businessesOf(options: BridgeWorkerOptions): readonly WorkerBusiness[] {
  if (options.businesses) return options.businesses;
  return [
    {
      id: SINGLE_BUSINESS_ID,
      naming: SINGLE_BUSINESS_NAMING,
      platform: options.platform,
      classifyPlatformError: options.classifyPlatformError,
      forwarder: options.forwarder,
      rules: options.rules,
      ...(options.makeRecorder ? { makeRecorder: options.makeRecorder } : {}),
      ...(options.shadow ? { shadow: options.shadow } : {}),
    },
  ];
}

/**
 * Every shard's queues, consumed here or not, on one shared connection. Both write the length of
 * their BullMQ event stream (`retention.event_stream`) to the queue's meta hash when made.
 */
function openQueues(
  layout: KeyLayout,
  connection: RedisClient,
  settings: WorkerSettings,
  retention: RetentionSettings,
): ShardQueues[] {
  return layout.all.map((shard) => ({
    shard,
    events: new Queue(QUEUE_NAMES.events, {
      connection,
      prefix: shard.queuePrefix,
      ...eventStreamOptions(retention),
    }),
    timers: new Queue(QUEUE_NAMES.timers, {
      connection,
      prefix: shard.queuePrefix,
      // Tracing on: a timer's job carries the context of the event that set it.
      ...bullmqTelemetry(),
      ...eventStreamOptions(retention),
      defaultJobOptions: bridgeJobOptions(settings.attempts, retention),
    }),
  }));
}

/** How long each closing step after the grace may take (a Redis that is gone answers nothing). */
const CLOSE_STEP_MS = 1_000;

/**
 * Stops taking jobs and waits for in-flight jobs up to `graceMs` (0: not at all), or until
 * `redisGone` aborts (nothing can finish without Redis); then closes the queues and connections,
 * each step bounded. A job cut off here keeps its place in Redis: its lock expires and the next
 * worker runs it again (the exactly-once ledger skips what it had done).
 */
async function closeWorker(
  workers: readonly Worker[],
  allQueues: readonly Queue[],
  connections: WorkerConnections,
  graceMs: number,
  log: Logger,
  redisGone: AbortSignal | undefined,
  /** Writes what the workers kept in memory (shadow rules counts), once they take no more jobs. */
  flush: () => Promise<void>,
): Promise<void> {
  const closing = Promise.all(workers.map((worker) => worker.close(graceMs <= 0)));
  const waited = await settleWithin(closing, graceMs > 0 ? graceMs : CLOSE_STEP_MS, redisGone);
  if (waited === 'timeout' && graceMs > 0) {
    log.warn({ graceMs }, 'in-flight jobs did not finish in time; closing anyway (they will be retried)');
  } else if (waited === 'aborted') {
    log.warn(
      'Redis went away while in-flight jobs were finishing: not waiting for them (they will be retried)',
    );
  }
  if (waited !== 'aborted') await settleWithin(flush(), CLOSE_STEP_MS);
  await settleWithin(Promise.allSettled(allQueues.map((queue) => queue.close())), CLOSE_STEP_MS);
  await Promise.all(connections.all().map((connection) => closeConnection(connection, CLOSE_STEP_MS)));
  if (waited !== 'settled') {
    // BullMQ's own blocking connections (copies of ours) would go on reconnecting.
    for (const worker of workers) void settleWithin(worker.disconnect(), CLOSE_STEP_MS);
  }
}
