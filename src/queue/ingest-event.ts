import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ConversationEvent } from '../events/conversation-event.js';
import { defineRedisScript } from '../shared/redis-script.js';
import type { EventJobData } from './event-job.js';
import { type BridgeKeys, eventJobId } from './redis-keys.js';

/**
 * Reserve an event: one atomic step that decides "new or seen before" and, when new, gives it an
 * arrival number and a place in its conversation's order.
 * KEYS: dedupe marker, arrival counter, conversation order zset. ARGV: ttl seconds, job id.
 * Returns {state, arrival}: state 'n' new, 'r' reserved earlier but not confirmed queued, 'q' queued.
 */
const RESERVE_LUA = `
local v = redis.call('GET', KEYS[1])
if v then
  return {string.sub(v, 1, 1), string.sub(v, 3)}
end
local arrival = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], 'r:' .. arrival, 'EX', tonumber(ARGV[1]))
redis.call('ZADD', KEYS[3], arrival, ARGV[2])
return {'n', tostring(arrival)}
`;

export type IngestOutcome = 'queued' | 'duplicate';

export interface IngestResult {
  outcome: IngestOutcome;
  jobId: string;
  arrival: number;
}

export interface IngestEventOptions {
  redis: Redis;
  queue: Queue;
  keys: BridgeKeys;
  /** How long a redelivery of the same event is recognised (default 72 h). */
  dedupeWindowSeconds: number;
  jobOptions: JobsOptions;
}

const reserve = defineRedisScript<[string, string]>('Reserve', 3, RESERVE_LUA);

/**
 * Stores an event durably, exactly once per event key:
 *  1. reserve (dedupe marker + arrival + order slot), atomically;
 *  2. add the BullMQ job under an id derived from the key (BullMQ ignores a second add of an
 *     existing id, so concurrent copies create one job);
 *  3. confirm the marker as queued.
 * A crash between 1 and 3 leaves the marker "reserved": the platform's redelivery then repeats
 * steps 2-3 instead of being dropped as a duplicate, so an acknowledged event is never lost and an
 * unacknowledged one is retried. Only after this resolves may the receiver answer success.
 */
export async function ingestEvent(
  options: IngestEventOptions,
  event: ConversationEvent,
): Promise<IngestResult> {
  const { redis, queue, keys } = options;
  const jobId = eventJobId(event.key);
  const dedupeKey = keys.dedupe(event.key);
  const conversation = event.conversationId ?? '';
  const [state, arrivalText] = await reserve(
    redis,
    [dedupeKey, keys.arrival, keys.order(conversation)],
    [options.dedupeWindowSeconds, jobId],
  );
  const arrival = Number(arrivalText);
  if (state === 'q') return { outcome: 'duplicate', jobId, arrival };

  const data: EventJobData = { arrival, event };
  await queue.add(event.kind, data, { ...options.jobOptions, jobId });
  await redis.set(dedupeKey, `q:${arrival}`, 'KEEPTTL', 'XX');
  return { outcome: state === 'n' ? 'queued' : 'duplicate', jobId, arrival };
}
