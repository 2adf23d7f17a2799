import { type JobsOptions, Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { type IngestResult, ingestBatch } from '../queue/ingest-event.js';
import { createKeyLayout, type KeyLayout, type QueueShard } from '../queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import {
  createRedisClient,
  type RedisClient,
  type RedisTopology,
  singleRedis,
} from '../redis/redis-connection.js';
import { ReceiverError } from './receiver-errors.js';
import { withTimeout } from './with-timeout.js';

/**
 * Job options of the `events` queue unless the caller sets them: bounded Redis memory (finished
 * jobs are removed by age and count; the dedupe markers, not the jobs, recognise redeliveries) and
 * retries with exponential backoff for the worker's transient failures. The worker's config will
 * set these later; they are options of createReceiver.
 */
export const DEFAULT_EVENT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 50_000 },
};

export interface EventProducerOptions {
  redisUrl?: string;
  /** Sentinel or Cluster (the config's `redis:`); `redisUrl`/`redis` are for one Redis. */
  topology?: RedisTopology;
  /** ioredis options (host, port, password, tls...); the fail-fast settings below apply on top. */
  redis?: RedisOptions;
  prefix: string;
  /** Queue shards and key tags; default: one untagged shard under `prefix`. */
  layout?: KeyLayout;
  /**
   * Replicas that must hold a batch before its webhooks are acknowledged (Redis WAIT on the
   * connection that wrote it), so that a failover cannot lose an acknowledged event. 0: none.
   */
  replicasAck?: number;
  replicasAckTimeoutMs?: number;
  /**
   * Settles once this process may store events (the Redis holds the layout the config asks for,
   * queue/layout-record.ts); a rejection refuses every event with its error (503).
   */
  layoutChecked?: Promise<void>;
  dedupeWindowSeconds: number;
  jobOptions: JobsOptions;
  /** Upper bound for one Redis command; also the bound of the readiness probe. */
  commandTimeoutMs: number;
  logger: Logger;
}

export interface EventProducer {
  readonly redis: RedisClient;
  /** Keys of no conversation (quarantine, health). */
  readonly keys: BridgeKeys;
  readonly layout: KeyLayout;
  /** Stores the event durably (exactly once per key); rejects when Redis cannot take it. */
  ingest(event: ConversationEvent): Promise<IngestResult>;
  /** A shard's queue as it is now (a queue whose start-up failed is replaced on the next ingest). */
  queue(shard?: number): Queue;
  /** Connected and not closed (cheap; `probe` does a real write). */
  isConnected(): boolean;
  /**
   * Resolves once connected; rejects RECEIVER_REDIS_UNAVAILABLE after `timeoutMs`, or at the first
   * connection error with `firstError` (one-shot tools: a refused connection will not heal by waiting).
   */
  connected(timeoutMs: number, options?: { firstError?: boolean }): Promise<void>;
  /** A SET with a short TTL on the health key, bounded by the command timeout. */
  probe(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The receiver's Redis producer. It must fail fast when Redis is down, so that the webhook is
 * answered 503 in bounded time and the platform retries (BullMQ "going to production": disable the
 * offline queue for producers). No auto-pipelining: the group commit already stores a batch with two
 * commands, one after the other, so an auto-pipeline would carry one command each time; and this
 * connection also holds BullMQ's 64 scripts, which ioredis copies onto every auto-pipeline it
 * creates (measured: a lone GET cost 140-170 us of CPU through it, 45-55 us without; bench:ab
 * with the shared harness's load: bridge CPU x0.96, Redis CPU unchanged).
 */
export function createEventProducer(options: EventProducerOptions): EventProducer {
  const { logger } = options;
  const redisOptions: RedisOptions = {
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    // Reconnect quickly (at most 1 s apart) so service resumes soon after Redis is back.
    retryStrategy: (times: number) => Math.min(times * 100, 1_000),
    ...options.redis,
    commandTimeout: options.commandTimeoutMs,
    enableOfflineQueue: false,
    // See above: one command per write costs less here than an auto-pipeline per command.
    enableAutoPipelining: false,
    lazyConnect: false,
  };
  const topology =
    options.topology ?? (options.redisUrl === undefined ? undefined : singleRedis(options.redisUrl));
  const redis: RedisClient =
    topology === undefined ? new Redis(redisOptions) : createRedisClient(topology, redisOptions);
  let lastErrorLog = 0;
  // Without a listener ioredis would print every reconnect error; log at most one per 5 s instead.
  redis.on('error', (error: unknown) => {
    const now = Date.now();
    if (now - lastErrorLog < 5_000) return;
    lastErrorLog = now;
    logger.warn(
      { err: describeError(error) },
      'redis connection error (webhooks are answered 503 until it is back)',
    );
  });

  const layout = options.layout ?? createKeyLayout({ prefix: options.prefix, shards: 1, tagged: false });
  const keys = layout.global;
  let closing: Promise<void> | undefined;
  interface QueueSlot {
    queue: Queue;
    failed: boolean;
  }
  /** One queue and one group commit per shard: a batch's keys all share its shard's hash tag. */
  const makeShard = (shard: QueueShard) => {
    const makeQueue = (): QueueSlot => {
      // Shares the fail-fast connection (BullMQ does not close a connection it was given).
      const queue = new Queue(QUEUE_NAMES.events, { connection: redis, prefix: shard.queuePrefix });
      const slot: QueueSlot = { queue, failed: false };
      queue.on('error', (error: unknown) =>
        logger.debug({ err: describeError(error) }, 'events queue error'),
      );
      // BullMQ's start-up (wait for ready, read the Redis version) runs once; if it failed, this
      // queue can never add again and is replaced on the next ingest.
      queue.waitUntilReady().catch(() => {
        slot.failed = true;
      });
      return slot;
    };
    let slot = makeQueue();
    const currentQueue = (): Queue => {
      if (slot.failed && !closing) {
        const old = slot.queue;
        slot = makeQueue();
        old.close().catch(() => undefined);
      }
      return slot.queue;
    };
    const commit = createGroupCommit((events) =>
      ingestBatch(
        {
          redis,
          queue: currentQueue(),
          keys: shard.keys,
          dedupeWindowSeconds: options.dedupeWindowSeconds,
          jobOptions: options.jobOptions,
          replicasAck: options.replicasAck ?? 0,
          replicasAckTimeoutMs: options.replicasAckTimeoutMs ?? 500,
        },
        events,
      ),
    );
    return { currentQueue, commit, close: () => slot.queue.close().catch(() => undefined) };
  };
  const shards = layout.all.map(makeShard);
  const route = (event: ConversationEvent): Promise<IngestResult> =>
    (shards[layout.shardOf(event.conversationId).index] as (typeof shards)[number]).commit(event);
  // Until the layout is known good, an event waits for the check at most `commandTimeoutMs` (the
  // check takes one round trip once Redis answers), then is refused (503, the platform retries).
  // Waiters are dropped when they give up, so a Redis that stays away holds no events in memory,
  // and nothing is stored after its webhook was answered 503.
  let layoutOk = options.layoutChecked === undefined;
  const waiters = new Set<() => void>();
  void options.layoutChecked?.then(
    () => {
      layoutOk = true;
      for (const wake of waiters) wake();
      waiters.clear();
    },
    () => undefined,
  );
  const notChecked = () =>
    new ReceiverError(
      'Redis has not answered since the receiver started (the key layout is not checked yet)',
      {
        code: 'RECEIVER_REDIS_UNAVAILABLE',
      },
    );
  const ingest = (event: ConversationEvent): Promise<IngestResult> => {
    if (layoutOk) return route(event);
    return new Promise<IngestResult>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        route(event).then(resolve, reject);
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(notChecked());
      }, options.commandTimeoutMs);
      waiters.add(wake);
    });
  };

  return {
    redis,
    keys,
    layout,
    queue: (shard = 0) => (shards[shard] ?? (shards[0] as (typeof shards)[number])).currentQueue(),
    ingest,
    isConnected: () => redis.status === 'ready' && !closing,
    async connected(timeoutMs, connectOptions = {}) {
      if (redis.status === 'ready') return;
      let onReady = () => {};
      let onError = (_error: unknown) => {};
      const ready = new Promise<void>((resolve, reject) => {
        onReady = resolve;
        onError = (error) =>
          reject(
            new ReceiverError(`could not connect to Redis: ${describeError(error)}`, {
              code: 'RECEIVER_REDIS_UNAVAILABLE',
              cause: error,
            }),
          );
        redis.once('ready', onReady);
        if (connectOptions.firstError) redis.once('error', onError);
      });
      try {
        await withTimeout(ready, timeoutMs, 'could not connect to Redis');
      } finally {
        redis.off('ready', onReady);
        redis.off('error', onError);
      }
    },
    async probe() {
      if (closing) throw new ReceiverError('the receiver is closing', { code: 'RECEIVER_REDIS_UNAVAILABLE' });
      await withTimeout(
        redis.set(keys.health, String(Date.now()), 'PX', 10_000),
        options.commandTimeoutMs,
        'Redis did not accept the readiness write',
      );
    },
    close() {
      closing ??= (async () => {
        await Promise.all(shards.map((shard) => shard.close()));
        try {
          await withTimeout(redis.quit(), 1_000, 'Redis QUIT');
        } catch {
          redis.disconnect();
        }
      })();
      return closing;
    },
  };
}

/** Largest batch: events, and their approximate JSON size (one job carries the whole batch). */
const MAX_BATCH_EVENTS = 64;
const MAX_BATCH_BYTES = 512 * 1024;

interface Pending {
  event: ConversationEvent;
  resolve: (result: IngestResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: events handed over while a batch is being stored wait for the next batch, and
 * each batch is stored with two round trips whatever its size (queue/ingest-event.ts). Idle, an
 * event is stored on the next turn of the event loop, so a lone webhook waits no longer than
 * before; under load, hundreds of webhooks per second share a few dozen batches. Each caller's
 * promise resolves only once its own batch is durable, and rejects with its batch's error. One
 * batch at a time: a redelivery can never race its original's batch within this process.
 */
export function createGroupCommit(
  store: (events: ConversationEvent[]) => Promise<IngestResult[]>,
): (event: ConversationEvent) => Promise<IngestResult> {
  const queue: Pending[] = [];
  let busy = false;
  let scheduled = false;

  const take = (): Pending[] => {
    let bytes = 0;
    let count = 0;
    while (count < queue.length && count < MAX_BATCH_EVENTS) {
      const next = queue[count] as Pending;
      bytes += 600 + next.event.text.length * 2 + next.event.caption.length * 2;
      if (count > 0 && bytes > MAX_BATCH_BYTES) break;
      count += 1;
    }
    return queue.splice(0, count);
  };

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (busy || queue.length === 0) return;
    busy = true;
    const batch = take();
    try {
      const results = await store(batch.map((p) => p.event));
      batch.forEach((p, i) => {
        p.resolve(results[i] as IngestResult);
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      busy = false;
      if (queue.length > 0) schedule();
    }
  };

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return (event) =>
    new Promise<IngestResult>((resolve, reject) => {
      queue.push({ event, resolve, reject });
      if (!busy) schedule();
    });
}
