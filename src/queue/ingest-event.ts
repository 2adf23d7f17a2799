import { randomBytes } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import { ConvoBridgeError } from '../base/errors.js';
import { type BusinessNaming, jobBusinessField } from '../events/business-naming.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { carrierOf } from '../observe/trace-context.js';
import { connectionFor, type RedisClient } from '../redis/redis-connection.js';
import { defineRedisScript } from '../redis/redis-script.js';
import { type BatchedEvent, batchJobName, type EventBatchData } from './event-job.js';
import { type BridgeKeys, conversationHash, eventId } from './redis-keys.js';

/**
 * Reserve a batch of events in ONE atomic step: for each event decide "new or seen before" and,
 * when new, give it an arrival number and a place in its conversation's order, owned by the batch
 * job about to be added. The dedupe marker holds `<arrival>|<owner job id>|<conversation hash>`
 * (the last part lets `reshard` move the marker to the conversation's new shard).
 *
 * A marker whose owner job does not exist while the event still waits in its conversation's order
 * was reserved by a receiver that died (or failed) before adding its job: the event was never
 * acknowledged, and this redelivery takes it over (same arrival, new owner). Should the old job
 * appear after all, its worker finds the event owned by another job and skips it, so the event
 * runs once. A marker whose event has left the order set was processed (or dead-lettered): a
 * duplicate.
 *
 * KEYS: arrival counter, then per event: dedupe marker, conversation order zset.
 * ARGV: ttl seconds, batch job id, job key prefix (`<prefix>:events:`), then per event: event id
 * and conversation hash.
 * Returns per event `n:<arrival>` new, `t:<arrival>` taken over, `d:<arrival>` duplicate.
 */
const RESERVE_LUA = `
local n = (#KEYS - 1) / 2
local ttl = tonumber(ARGV[1])
local job = ARGV[2]
local out = {}
local fresh = {}
for i = 1, n do
  local marker = KEYS[2 * i]
  local order = KEYS[2 * i + 1]
  local id = ARGV[2 + 2 * i]
  local conv = ARGV[3 + 2 * i]
  local v = redis.call('GET', marker)
  if not v then
    table.insert(fresh, i)
  else
    local bar = string.find(v, '|', 1, true)
    local arrival = bar and string.sub(v, 1, bar - 1) or v
    local owner = bar and string.sub(v, bar + 1) or ''
    local bar2 = string.find(owner, '|', 1, true)
    if bar2 then owner = string.sub(owner, 1, bar2 - 1) end
    if owner == job or owner == '' or redis.call('EXISTS', ARGV[3] .. owner) == 1 then
      out[i] = 'd:' .. arrival
    elseif redis.call('ZSCORE', order, owner .. '|' .. id) then
      redis.call('ZREM', order, owner .. '|' .. id)
      redis.call('ZADD', order, arrival, job .. '|' .. id)
      redis.call('SET', marker, arrival .. '|' .. job .. '|' .. conv, 'KEEPTTL')
      out[i] = 't:' .. arrival
    else
      out[i] = 'd:' .. arrival
    end
  end
end
if #fresh > 0 then
  local first = redis.call('INCRBY', KEYS[1], #fresh) - #fresh
  for j, i in ipairs(fresh) do
    local arrival = first + j
    redis.call('SET', KEYS[2 * i], arrival .. '|' .. job .. '|' .. ARGV[3 + 2 * i], 'EX', ttl)
    redis.call('ZADD', KEYS[2 * i + 1], arrival, job .. '|' .. ARGV[2 + 2 * i])
    out[i] = 'n:' .. arrival
  end
end
return out
`;
const reserve = defineRedisScript<string[]>('ReserveBatch', 'any', RESERVE_LUA);

export type IngestOutcome = 'queued' | 'duplicate';

export interface IngestResult {
  outcome: IngestOutcome;
  /** The batch job that carries (or carried) the event. */
  jobId: string;
  arrival: number;
}

export interface IngestEventOptions {
  redis: RedisClient;
  queue: Queue;
  keys: BridgeKeys;
  /** How long a redelivery of the same event is recognised (default 72 h). */
  dedupeWindowSeconds: number;
  jobOptions: JobsOptions;
  /** Replicas that must have the batch before it counts as stored (Redis WAIT); 0: none. */
  replicasAck?: number;
  replicasAckTimeoutMs?: number;
}

/** A fresh batch job id: unique, never all digits, no ':' (BullMQ's rules for custom ids). */
export function newBatchJobId(): string {
  return `b-${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
}

/** One event to store, and the naming of the business whose webhook brought it. */
export interface IngestItem {
  event: ConversationEvent;
  naming: BusinessNaming;
}

/**
 * Stores a batch of events durably, exactly once per event key, with two round trips whatever
 * the batch size (the receiver's group commit, receive/group-commit.ts):
 *  1. reserve every event (dedupe marker + arrival + order slot, owned by the new job), atomically;
 *  2. add ONE BullMQ job carrying the new events.
 * Only after this resolves may the receiver answer success. A crash between 1 and 2 leaves
 * markers whose owner never appeared: the platform's redelivery (the event was not acknowledged)
 * takes them over (see RESERVE_LUA). Keys repeated inside one batch are stored once.
 */
export function ingestBatch(
  options: IngestEventOptions,
  events: readonly ConversationEvent[],
): Promise<IngestResult[]> {
  const naming = options.keys.naming;
  return ingestItems(
    options,
    events.map((event) => ({ event, naming })),
  );
}

/**
 * The same for the events of several businesses in one batch: each event's
 * conversation keys are its business's (`keysOf`), the event keys and arrival counter the
 * shard's (see redis-keys.ts).
 */
export async function ingestItems(
  options: IngestEventOptions & { keysOf?: (naming: BusinessNaming) => BridgeKeys },
  items: readonly IngestItem[],
): Promise<IngestResult[]> {
  const { redis, queue, keys } = options;
  const keysOf = (naming: BusinessNaming) =>
    naming.tag === keys.naming.tag ? keys : (options.keysOf?.(naming) ?? keys);
  const jobId = newBatchJobId();
  const unique = new Map<string, number>();
  const distinct: IngestItem[] = [];
  for (const item of items) {
    if (!unique.has(item.event.key)) {
      unique.set(item.event.key, distinct.length);
      distinct.push(item);
    }
  }
  const scriptKeys = [keys.arrival];
  const args: (string | number)[] = [options.dedupeWindowSeconds, jobId, `${queue.qualifiedName}:`];
  for (const { event, naming } of distinct) {
    scriptKeys.push(keys.dedupe(event.key), keysOf(naming).order(event.conversationId ?? ''));
    args.push(eventId(event.key), conversationHash(event.conversationId ?? '').slice(0, 8));
  }
  const states = await reserve(redis, scriptKeys, args);
  const results: IngestResult[] = [];
  const data: EventBatchData = { events: [] };
  const businesses = new Set<string>();
  distinct.forEach(({ event, naming }, index) => {
    const state = String(states[index] ?? 'd:0');
    const arrival = Number(state.slice(2));
    if (state[0] === 'd') {
      results.push({ outcome: 'duplicate', jobId, arrival });
      return;
    }
    const trace = carrierOf(event); // undefined unless tracing is on
    const batched: BatchedEvent = {
      arrival,
      ...jobBusinessField(naming),
      event,
      ...(trace ? { trace } : {}),
    };
    if (naming.tag !== '') businesses.add(naming.tag);
    data.events.push(batched);
    results.push({ outcome: 'queued', jobId, arrival });
  });
  if (data.events.length > 0) {
    data.events.sort((a, b) => a.arrival - b.arrival);
    await queue.add(batchJobName(businesses), data, { ...options.jobOptions, jobId });
  }
  // Also for a batch of duplicates only: their original may not have reached a replica yet.
  if ((options.replicasAck ?? 0) > 0) await waitForReplicas(options, keys.arrival);
  // Copies inside this batch share the first copy's fate, reported as duplicates.
  const seen = new Set<string>();
  return items.map(({ event }) => {
    const result = results[unique.get(event.key) ?? 0] as IngestResult;
    if (seen.has(event.key)) return { ...result, outcome: 'duplicate' as const };
    seen.add(event.key);
    return result;
  });
}

/**
 * Redis replication is asynchronous: a primary that dies right after acknowledging a write loses
 * it, and the replica promoted in its place never saw the event. WAIT on the connection that made
 * the writes blocks until that many replicas have them (or the timeout passes), so a webhook is
 * acknowledged only once its event would survive a failover. Fewer replicas in time: the batch is
 * reported not stored (503, the platform redelivers; the redelivery is recognised as a duplicate).
 */
async function waitForReplicas(options: IngestEventOptions, anyKeyOfShard: string): Promise<void> {
  const wanted = options.replicasAck ?? 0;
  const connection = connectionFor(options.redis, anyKeyOfShard);
  if (connection === undefined) {
    throw new ConvoBridgeError(
      'no Redis primary serves this queue shard right now (a failover is under way)',
      {
        code: 'REDIS_REPLICAS_UNAVAILABLE',
      },
    );
  }
  const acked = Number(await connection.wait(wanted, options.replicasAckTimeoutMs ?? 500));
  if (acked < wanted) {
    throw new ConvoBridgeError(
      `only ${acked} of ${wanted} Redis replica(s) confirmed the event within ${options.replicasAckTimeoutMs ?? 500} ms: it is stored on the primary but could be lost by a failover, so it is not acknowledged; check the replicas (INFO replication), or lower redis.replicas_ack`,
      { code: 'REDIS_REPLICAS_UNAVAILABLE' },
    );
  }
}

/** One event alone (tools and tests; the receiver batches through event-producer.ts). */
export async function ingestEvent(
  options: IngestEventOptions,
  event: ConversationEvent,
): Promise<IngestResult> {
  const [result] = await ingestBatch(options, [event]);
  return result as IngestResult;
}
