import { type JobsOptions, Queue, type QueueOptions } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import { settleWithin } from '../base/settle-within.js';
import type { RedisTopology } from '../config/redis-topology.js';
import { type BusinessNaming, SINGLE_BUSINESS_NAMING } from '../events/business-naming.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { type IngestItem, type IngestResult, ingestItems } from '../queue/ingest-event.js';
import { keptJobs } from '../queue/job-options.js';
import { createKeyLayout, type KeyLayout, type QueueShard } from '../queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import { closeConnection } from '../redis/close-connection.js';
import {
  createRedisClient,
  describeTopology,
  type RedisClient,
  singleRedis,
} from '../redis/redis-connection.js';
import { type PrimaryWatch, watchUnreachablePrimaries } from '../redis/watch-unreachable-primaries.js';
import { createGroupCommit } from './group-commit.js';
import { DEFAULT_RETENTION, RECEIVER_DEFAULTS } from './receiver-defaults.js';
import { ReceiverError } from './receiver-errors.js';
import { withTimeout } from './with-timeout.js';

/**
 * Job options of the `events` queue unless the caller sets them: what is kept once a job is done
 * (the default `retention:` section: completed jobs removed at once, failed ones by age and count;
 * the dedupe markers, not the jobs, recognise redeliveries) and retries with exponential backoff
 * for the worker's transient failures. The bridge sets them from its config
 * (receiverOptionsFromConfig).
 */
export const DEFAULT_EVENT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  ...keptJobs(DEFAULT_RETENTION),
};

/** Where events are stored. createReceiver's options carry these fields and hand them on as given. */
export interface EventStoreTarget {
  /** Redis URL (`redis://[:password@]host:port[/db]`, `rediss://` for TLS). */
  redisUrl?: string;
  /** ioredis options (host, port, password, tls...), with or instead of `redisUrl`; the fail-fast settings apply on top. */
  redis?: RedisOptions;
  /** Sentinel or Cluster (the config's `redis:`), instead of `redisUrl`/`redis`. */
  topology?: RedisTopology;
  /** Queue shards and key tags (queue/key-layout.ts); default one untagged shard under `prefix`. */
  layout?: KeyLayout;
  /**
   * Replicas that must hold a batch before its webhooks are acknowledged (Redis WAIT on the
   * connection that wrote it), so that a failover cannot lose an acknowledged event. Default 0: none.
   */
  replicasAck?: number;
  replicasAckTimeoutMs?: number;
  /**
   * Settles once this process may store events (the Redis holds the layout the config asks for,
   * queue/layout-record.ts); a rejection refuses every event with its error (503).
   */
  layoutChecked?: Promise<void>;
}

export interface EventProducerOptions extends EventStoreTarget {
  prefix: string;
  dedupeWindowSeconds: number;
  jobOptions: JobsOptions;
  /**
   * The length of the events queue's BullMQ event stream, written to the queue's meta hash when a
   * queue is made (`retention.event_stream`). Undefined: the meta hash is left as the bridge's
   * queues wrote it (a one-shot tool that adds an event must not reset the bridge's setting).
   */
  eventStreamMaxLen?: number;
  /** Upper bound for one Redis command; also the bound of the readiness probe. */
  commandTimeoutMs: number;
  logger: Logger;
}

export interface EventProducer {
  readonly redis: RedisClient;
  /** Where Redis is, in words for messages (the nodes tried; never a password). */
  readonly address: string;
  /** Keys of no conversation (quarantine, health). */
  readonly keys: BridgeKeys;
  readonly layout: KeyLayout;
  /** Stores the event durably (exactly once per key); rejects when Redis cannot take it. */
  ingest(event: ConversationEvent): Promise<IngestResult>;
  /**
   * The same for one business's naming: its keys and event keys, the shared queues. The
   * single-business naming's is `ingest`. Made once per naming and kept.
   */
  ingestFor(naming: BusinessNaming): (event: ConversationEvent) => Promise<IngestResult>;
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
 * The receiver's Redis producer: one fail-fast connection, one queue and one group commit per
 * queue shard, and a gate that holds events until the key layout is checked.
 */
export function createEventProducer(options: EventProducerOptions): EventProducer {
  const redis = connectProducerRedis(options);
  const address = describeStoreTarget(options);
  const layout = options.layout ?? createKeyLayout({ prefix: options.prefix, shards: 1, tagged: false });
  const keys = layout.global;
  let closing: Promise<void> | undefined;
  const isClosing = () => closing !== undefined;
  const queueOptions =
    options.eventStreamMaxLen === undefined
      ? { skipMetasUpdate: true }
      : { streams: { events: { maxLen: options.eventStreamMaxLen } } };
  const queues = layout.all.map((shard) =>
    createShardQueue(redis, shard, queueOptions, options.logger, isClosing),
  );
  const commits = layout.all.map((shard) =>
    createShardCommit(redis, shard, layout, queues[shard.index] as ShardQueue, options),
  );
  const primaryWatch =
    redis instanceof Cluster
      ? refuseShardsOfUnreachablePrimaries(redis, layout, commits, options.logger)
      : undefined;
  const ingestFor = ingestPerBusiness(layout, commits, options);

  return {
    redis,
    address,
    keys,
    layout,
    queue: (shard = 0) => (queues[shard] ?? (queues[0] as ShardQueue)).current(),
    ingest: ingestFor(SINGLE_BUSINESS_NAMING),
    ingestFor,
    isConnected: () => redis.status === 'ready' && !closing,
    connected: (timeoutMs, connectOptions = {}) => waitUntilConnected(redis, timeoutMs, connectOptions),
    async probe() {
      if (closing) throw new ReceiverError('the receiver is closing', { code: 'RECEIVER_REDIS_UNAVAILABLE' });
      await withTimeout(
        redis.set(keys.health, String(Date.now()), 'PX', 10_000),
        options.commandTimeoutMs,
        'Redis did not accept the readiness write',
      );
    },
    close() {
      primaryWatch?.stop();
      closing ??= closeProducer(redis, queues);
      return closing;
    },
  };
}

/**
 * One ingest function per business, made on first use, all feeding the same group commit per queue
 * shard (`commits`, by shard index, read on every event: a shard whose primary is unreachable has
 * its commit swapped for a refusal, see refuseShardsOfUnreachablePrimaries): a batch holds the events of every business that arrived together (a batch per business
 * would make each event of a bridge of 200 businesses its own batch, at several times the Redis
 * commands and CPU of an event in a batch). An explicit business's event keys get its id in front
 * (`<id>:<key>`), so everything derived from an event key (dedupe, run state, timer ids, the
 * `webhook-id` of forwards) stays apart from another business's same message id; its conversations
 * are kept under its keys (queue/redis-keys.ts).
 */
function ingestPerBusiness(
  layout: KeyLayout,
  commits: readonly ShardCommit[],
  options: EventProducerOptions,
): (naming: BusinessNaming) => (event: ConversationEvent) => Promise<IngestResult> {
  const route = (item: IngestItem): Promise<IngestResult> =>
    (commits[layout.shardOf(item.event.conversationId).index] as ShardCommit)(item);
  const gated = gateOnLayoutCheck(route, options.layoutChecked, options.commandTimeoutMs);
  const made = new Map<string, (event: ConversationEvent) => Promise<IngestResult>>();
  return (naming) => {
    let ingest = made.get(naming.tag);
    if (ingest === undefined) {
      const prefix = naming.eventKeyPrefix;
      ingest =
        prefix === ''
          ? (event) => gated({ event, naming })
          : (event) => gated({ event: { ...event, key: `${prefix}${event.key}` }, naming });
      made.set(naming.tag, ingest);
    }
    return ingest;
  };
}

/**
 * The producer's connection. It must fail fast when Redis is down, so that the webhook is
 * answered 503 in bounded time and the platform retries (BullMQ "going to production": disable the
 * offline queue for producers). No auto-pipelining: the group commit already stores a batch with two
 * commands, one after the other, so an auto-pipeline would carry one command each time; and this
 * connection also holds BullMQ's 64 scripts, which ioredis copies onto every auto-pipeline it
 * creates (measured: a lone GET cost 140-170 us of CPU through it, 45-55 us without; bench:ab
 * with the shared harness's load: bridge CPU x0.96, Redis CPU unchanged).
 */
/** The Redis of a target in words: its topology's nodes, or the host and port of plain ioredis options. */
export function describeStoreTarget(target: EventStoreTarget): string {
  if (target.topology !== undefined) return describeTopology(target.topology);
  if (target.redisUrl !== undefined) return describeTopology(singleRedis(target.redisUrl));
  const { host = 'localhost', port = 6379, path } = target.redis ?? {};
  return path === undefined ? `${host}:${port}` : path;
}

function connectProducerRedis(options: EventProducerOptions): RedisClient {
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
  return redis;
}

interface QueueSlot {
  queue: Queue;
  failed: boolean;
}

/** A shard's events queue (shared by every business), replaced when its start-up failed. */
interface ShardQueue {
  current(): Queue;
  close(): Promise<void>;
}

type ShardCommit = (item: IngestItem) => Promise<IngestResult>;

function createShardQueue(
  redis: RedisClient,
  shard: QueueShard,
  queueOptions: Pick<QueueOptions, 'streams' | 'skipMetasUpdate'>,
  logger: Logger,
  isClosing: () => boolean,
): ShardQueue {
  const makeQueue = (): QueueSlot => {
    // Shares the fail-fast connection (BullMQ does not close a connection it was given).
    const queue = new Queue(QUEUE_NAMES.events, {
      connection: redis,
      prefix: shard.queuePrefix,
      ...queueOptions,
    });
    const slot: QueueSlot = { queue, failed: false };
    queue.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'events queue error'));
    // BullMQ's start-up (wait for ready, read the Redis version) runs once; if it failed, this
    // queue can never add again and is replaced on the next ingest.
    queue.waitUntilReady().catch(() => {
      slot.failed = true;
    });
    return slot;
  };
  let slot = makeQueue();
  return {
    current() {
      if (slot.failed && !isClosing()) {
        const old = slot.queue;
        slot = makeQueue();
        old.close().catch(() => undefined);
      }
      return slot.queue;
    },
    close: () => slot.queue.close().catch(() => undefined),
  };
}

/** One group commit per shard: a batch's keys all share its shard's hash tag. */
function createShardCommit(
  redis: RedisClient,
  shard: QueueShard,
  layout: KeyLayout,
  queue: ShardQueue,
  options: EventProducerOptions,
): ShardCommit {
  const keysOf = (naming: BusinessNaming) => (layout.forNaming(naming).all[shard.index] as QueueShard).keys;
  return createGroupCommit<IngestItem>((items) =>
    ingestItems(
      {
        redis,
        queue: queue.current(),
        keys: shard.keys,
        keysOf,
        dedupeWindowSeconds: options.dedupeWindowSeconds,
        jobOptions: options.jobOptions,
        replicasAck: options.replicasAck ?? RECEIVER_DEFAULTS.replicasAck,
        replicasAckTimeoutMs: options.replicasAckTimeoutMs ?? RECEIVER_DEFAULTS.replicasAckTimeoutMs,
      },
      items,
    ),
  );
}

/**
 * On a cluster, a shard whose primary the client knows to be unreachable is refused at once (503,
 * the platform retries) instead of after the enqueue timeout: its commit is swapped for a refusal
 * while the primary is down, and back when it answers or a replica took over. The commits of
 * healthy shards are left as they are: nothing is added to a webhook's path.
 */
function refuseShardsOfUnreachablePrimaries(
  cluster: Cluster,
  layout: KeyLayout,
  commits: ShardCommit[],
  logger: Logger,
): PrimaryWatch {
  const healthy = [...commits];
  return watchUnreachablePrimaries(
    cluster,
    layout.all.map((shard) => shard.keys.arrival),
    {
      down(index, primary) {
        const refusal = new ReceiverError(
          `the Redis primary ${primary} serving queue shard ${index} is unreachable: the event is not stored (the platform retries it); a replica takes over within the cluster's node timeout if the primary has one, else start the primary again`,
          { code: 'RECEIVER_REDIS_UNAVAILABLE' },
        );
        commits[index] = () => Promise.reject(refusal);
        logger.warn(
          { shard: index, primary },
          `webhooks of queue shard ${index} are answered 503 at once: its Redis primary ${primary} is unreachable`,
        );
      },
      up(index) {
        commits[index] = healthy[index] as ShardCommit;
        logger.info(
          { shard: index },
          `queue shard ${index} has a reachable Redis primary again: taking its webhooks`,
        );
      },
    },
  );
}

/**
 * Until the layout is known good, an event waits for the check at most `timeoutMs` (the check
 * takes one round trip once Redis answers), then is refused (503, the platform retries). Waiters
 * are dropped when they give up, so a Redis that stays away holds no events in memory, and nothing
 * is stored after its webhook was answered 503.
 */
function gateOnLayoutCheck(
  route: (item: IngestItem) => Promise<IngestResult>,
  layoutChecked: Promise<void> | undefined,
  timeoutMs: number,
): (item: IngestItem) => Promise<IngestResult> {
  let layoutOk = layoutChecked === undefined;
  const waiters = new Set<() => void>();
  void layoutChecked?.then(
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
  return (event) => {
    if (layoutOk) return route(event);
    return new Promise<IngestResult>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        route(event).then(resolve, reject);
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(notChecked());
      }, timeoutMs);
      waiters.add(wake);
    });
  };
}

/** EventProducer.connected. */
async function waitUntilConnected(
  redis: RedisClient,
  timeoutMs: number,
  connectOptions: { firstError?: boolean },
): Promise<void> {
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
}

/**
 * Closes every shard's queue, then the connection (QUIT, or a disconnect when it hangs), each step
 * bounded: a close must not wait for a Redis that is gone.
 */
async function closeProducer(redis: RedisClient, queues: readonly ShardQueue[]): Promise<void> {
  await settleWithin(Promise.all(queues.map((queue) => queue.close())), 1_000);
  await closeConnection(redis, 1_000);
}
