import { type BridgeKeys, parseDedupeMarker } from '../../src/queue/redis-keys.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import type { EventRunResult } from '../../src/worker/processor/run-event.js';

/**
 * What became of one event, read from outside the bridge: the batch job that carries it (named by
 * its dedupe marker, `<arrival>|<job id>`), when that job was last taken by a worker, and the
 * event's result once the job completed (its return value lists every event it finished).
 */
export async function eventRun(
  redis: RedisClient,
  keys: BridgeKeys,
  queuePrefix: string,
  eventKey: string,
): Promise<{ jobId: string; processedOn: number | null; result: EventRunResult | undefined } | undefined> {
  const marker = await redis.get(keys.dedupe(eventKey));
  if (!marker) return undefined;
  const { jobId } = parseDedupeMarker(marker);
  const [processedOn, returnvalue] = await redis.hmget(
    `${queuePrefix}:events:${jobId}`,
    'processedOn',
    'returnvalue',
  );
  let result: EventRunResult | undefined;
  if (returnvalue) {
    const parsed = JSON.parse(returnvalue) as { events?: EventRunResult[] } | null;
    result = parsed?.events?.find((e) => e.eventKey === eventKey);
  }
  return { jobId, processedOn: processedOn ? Number(processedOn) : null, result };
}

/** Ids of the timers registered (pending or firing) in a conversation. */
export async function timerIds(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
): Promise<string[]> {
  const fields = await redis.hkeys(keys.conversation(conversationId));
  return fields.filter((f) => f.startsWith('T:')).map((f) => f.slice(2));
}
