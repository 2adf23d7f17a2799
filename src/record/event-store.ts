import type { BridgeKeys } from '../queue/redis-keys.js';
import { eventId } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';
import { type RecordedEvent, RecordedEventSchema } from './recorded-event.js';

/**
 * Recorded events in RedisClient: an index (zset, score = evaluation time in ms, member =
 * event id), the entries (hash, event id -> JSON line) and a sequence. One script call per event
 * writes the entry and trims by age and count, so recording costs one command per event, sent on
 * the worker's auto-pipelined connection. A redelivered event overwrites its own entry.
 *
 * The index and the entries expire max age after the last write (every entry is older than that
 * by then), so a bridge that stops recording keeps nothing past `retention.recorded_events`
 * (what customers wrote is not kept longer than asked); the sequence holds no event and stays.
 *
 * KEYS: index, entries, seq. ARGV: event id, score (ms), JSON line without `seq` (starts with
 * `{"v":1`), oldest score kept, max count, max age (ms). Returns the sequence number.
 */
const RECORD_LUA = `
local seq = redis.call('INCR', KEYS[3])
local id = ARGV[1]
redis.call('ZADD', KEYS[1], ARGV[2], id)
redis.call('HSET', KEYS[2], id, '{"seq":' .. seq .. ',' .. string.sub(ARGV[3], 2))
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4], 'LIMIT', 0, 100)
local extra = redis.call('ZCARD', KEYS[1]) - #old - tonumber(ARGV[5])
if extra > 0 then
  if extra > 100 then extra = 100 end
  local over = redis.call('ZRANGE', KEYS[1], #old, #old + extra - 1)
  for i = 1, #over do old[#old + 1] = over[i] end
end
if #old > 0 then
  redis.call('ZREM', KEYS[1], unpack(old))
  redis.call('HDEL', KEYS[2], unpack(old))
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return seq
`;
const recordScript = defineRedisScript<number>('record-event', 3, RECORD_LUA);

export interface StoreLimits {
  /** `retention.recorded_events` (or the old `record.max_age`). */
  maxAgeMs: number;
  /** `record.max_count`. */
  maxCount: number;
}

/** Writes one recorded line (its `seq` is given by RedisClient). */
export async function storeRecordedEvent(
  redis: RedisClient,
  keys: BridgeKeys,
  line: Omit<RecordedEvent, 'seq'>,
  limits: StoreLimits,
): Promise<number> {
  const at = Date.parse(line.now);
  const json = JSON.stringify({
    v: line.v,
    now: line.now,
    event: line.event,
    facts: line.facts,
    plan: line.plan,
    redacted: line.redacted,
  });
  return recordScript(
    redis,
    [keys.recordedIndex, keys.recordedEntries, keys.recordedSeq],
    [eventId(line.event.key), at, json, at - limits.maxAgeMs, limits.maxCount, limits.maxAgeMs],
  );
}

export interface ReadOptions {
  /** Only events evaluated at or after this instant (ms). */
  sinceMs?: number;
  /** At most this many, the newest ones (default: all). */
  limit?: number;
}

export interface ReadResult {
  /** In recording order (evaluation time, then sequence). */
  events: RecordedEvent[];
  /** Entries that did not pass the schema (written by another version?), as `id: problem`. */
  problems: string[];
}

/** Reads recorded events back, each validated (they cross a boundary: another bridge may have written them). */
export async function readRecordedEvents(
  redis: RedisClient,
  keys: BridgeKeys,
  options: ReadOptions = {},
): Promise<ReadResult> {
  const min = options.sinceMs === undefined ? '-inf' : String(options.sinceMs);
  let ids = await redis.zrangebyscore(keys.recordedIndex, min, '+inf');
  if (options.limit !== undefined && ids.length > options.limit) ids = ids.slice(ids.length - options.limit);
  const events: RecordedEvent[] = [];
  const problems: string[] = [];
  const CHUNK = 1000;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const values = await redis.hmget(keys.recordedEntries, ...chunk);
    values.forEach((value, j) => {
      const id = chunk[j] ?? '';
      if (value === null) return; // trimmed between the two reads
      let json: unknown;
      try {
        json = JSON.parse(value);
      } catch {
        problems.push(`${id}: not JSON`);
        return;
      }
      const parsed = RecordedEventSchema.safeParse(json);
      if (parsed.success) events.push(parsed.data);
      else problems.push(`${id}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    });
  }
  events.sort((a, b) => Date.parse(a.now) - Date.parse(b.now) || a.seq - b.seq);
  return { events, problems };
}

/** One recorded event by event id (hex), event key, or sequence number. */
export async function findRecordedEvent(
  redis: RedisClient,
  keys: BridgeKeys,
  ref: string,
): Promise<RecordedEvent | undefined> {
  const direct = [ref, eventId(ref)];
  for (const id of direct) {
    const value = await redis.hget(keys.recordedEntries, id);
    if (value !== null) {
      const parsed = RecordedEventSchema.safeParse(JSON.parse(value));
      if (parsed.success) return parsed.data;
    }
  }
  if (/^\d+$/.test(ref)) {
    const { events } = await readRecordedEvents(redis, keys);
    return events.find((e) => e.seq === Number(ref));
  }
  return undefined;
}
