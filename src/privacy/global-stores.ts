import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { belongsTo, type ConversationRef, parseJson, stripBatch } from './job-data.js';
import { conversationNeedles } from './needles.js';
import { findInHash } from './scan-stores.js';

/**
 * The stores of no conversation's shard (business-scoped keys under the global prefix): dead
 * letters, quarantined bodies and recorded events. Each answers what it holds of one conversation
 * and erases it; with `dryRun` only counts.
 */

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null;

export interface DeadLetterShare {
  erased: number;
  /**
   * Event keys of the erased dead letters, and the ids of erased timers and bursts (their runs'
   * state is kept for a replay, under these: erase it too).
   */
  eventKeys: string[];
}

/**
 * Dead letters of the conversation: erased whole; a dead letter of another conversation whose
 * kept data still holds one of its events (a batch) is rewritten without them.
 */
export async function forgetDeadLetters(
  redis: RedisClient,
  keys: BridgeKeys,
  ref: ConversationRef,
  dryRun: boolean,
): Promise<DeadLetterShare> {
  const share: DeadLetterShare = { erased: 0, eventKeys: [] };
  const needle = conversationNeedles(ref.conversationId).values[0] as string;
  const ids = await redis.zrange(keys.deadIndex, 0, -1);
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const raws = await redis.mget(chunk.map((id) => keys.dead(id)));
    for (const [j, raw] of raws.entries()) {
      if (raw === null || !raw.includes(needle)) continue;
      const id = chunk[j] as string;
      const entry = parseJson(raw);
      if (!isObject(entry)) continue;
      if (
        belongsTo({ conversationId: entry.conversationId, business: businessOf(entry) ?? undefined }, ref)
      ) {
        share.erased += 1;
        if (typeof entry.eventKey === 'string') share.eventKeys.push(entry.eventKey);
        // A timer's or a burst's run state (kept for the replay) is keyed by its id.
        const runId = isObject(entry.data) ? (entry.data.burstId ?? entry.data.timerId) : undefined;
        if (entry.queue === 'timers' && typeof runId === 'string') share.eventKeys.push(runId);
        if (!dryRun) await redis.multi().del(keys.dead(id)).zrem(keys.deadIndex, id).exec();
        continue;
      }
      const stripped = stripBatch(entry.data, ref);
      if (stripped === null) continue;
      share.erased += 1;
      share.eventKeys.push(...stripped.eventKeys);
      if (!dryRun)
        await redis.set(keys.dead(id), JSON.stringify({ ...entry, data: stripped.data }), 'KEEPTTL');
    }
  }
  return share;
}

/** The business a dead letter's data names (a timer's or a batch's first event's), else none. */
function businessOf(entry: Loose): string | null {
  const data = entry.data;
  if (!isObject(data)) return null;
  if (typeof data.business === 'string') return data.business;
  const first = Array.isArray(data.events) ? data.events[0] : undefined;
  return isObject(first) && typeof first.business === 'string' ? first.business : null;
}

/** Quarantined bodies naming the conversation (as the normaliser read it, or anywhere in the body as a JSON string). */
export async function forgetQuarantine(
  redis: RedisClient,
  keys: BridgeKeys,
  ref: ConversationRef,
  dryRun: boolean,
): Promise<number> {
  const candidates = await findInHash(redis, keys.quarantineEntries, conversationNeedles(ref.conversationId));
  const quoted = JSON.stringify(ref.conversationId);
  const ids: string[] = [];
  for (const id of candidates) {
    const entry = parseJson(await redis.hget(keys.quarantineEntries, id));
    if (!isObject(entry)) continue;
    const body = typeof entry.body === 'string' ? entry.body : '';
    if (entry.conversationId === ref.conversationId || body.includes(quoted)) ids.push(id);
  }
  return eraseEntries(redis, keys.quarantineEntries, keys.quarantine, ids, dryRun);
}

/** Recorded events of the conversation (`record:`); their event keys are added to `eventKeys`. */
export async function forgetRecorded(
  redis: RedisClient,
  keys: BridgeKeys,
  ref: ConversationRef,
  dryRun: boolean,
  eventKeys: string[] = [],
): Promise<number> {
  const candidates = await findInHash(redis, keys.recordedEntries, conversationNeedles(ref.conversationId));
  const ids: string[] = [];
  for (let i = 0; i < candidates.length; i += 500) {
    const chunk = candidates.slice(i, i + 500);
    const values = await redis.hmget(keys.recordedEntries, ...chunk);
    values.forEach((value, j) => {
      const line = parseJson(value);
      if (isObject(line) && isObject(line.event) && line.event.conversationId === ref.conversationId) {
        ids.push(chunk[j] as string);
        if (typeof line.event.key === 'string') eventKeys.push(line.event.key);
      }
    });
  }
  return eraseEntries(redis, keys.recordedEntries, keys.recordedIndex, ids, dryRun);
}

/**
 * Shadow rules differences of the conversation (`shadow:`): their examples name it and
 * hold both plans as rendered. Their slots are emptied; the counts (numbers only) stay.
 */
export async function forgetShadowDifferences(
  redis: RedisClient,
  keys: BridgeKeys,
  ref: ConversationRef,
  dryRun: boolean,
): Promise<number> {
  const candidates = await findInHash(redis, keys.shadowExamples, conversationNeedles(ref.conversationId));
  const fields: string[] = [];
  for (let i = 0; i < candidates.length; i += 500) {
    const chunk = candidates.slice(i, i + 500);
    const values = await redis.hmget(keys.shadowExamples, ...chunk);
    values.forEach((value, j) => {
      const example = parseJson(value);
      if (isObject(example) && example.conversationId === ref.conversationId) fields.push(chunk[j] as string);
    });
  }
  if (dryRun || fields.length === 0) return fields.length;
  for (let i = 0; i < fields.length; i += 500)
    await redis.hdel(keys.shadowExamples, ...fields.slice(i, i + 500));
  return fields.length;
}

/** Deletes entries of a store kept as a hash of entries plus a zset index. */
export async function eraseEntries(
  redis: RedisClient,
  entries: string,
  index: string,
  ids: readonly string[],
  dryRun: boolean,
): Promise<number> {
  if (dryRun || ids.length === 0) return ids.length;
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    await redis
      .multi()
      .hdel(entries, ...chunk)
      .zrem(index, ...chunk)
      .exec();
  }
  return ids.length;
}
