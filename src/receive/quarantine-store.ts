import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseRetentionSettings } from '../config/config-schema.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';
import { ReceiverError } from './receiver-errors.js';

/**
 * The quarantine keeps authenticated webhook bodies the receiver could not turn into an event
 * (and those with an event name it does not know yet), so that nothing the platform delivered is
 * lost: an operator can read them, and replay them after an upgrade. Headers are never stored, so
 * the secret never is.
 */
export const QUARANTINE_REASONS = [
  'unknown_event',
  'not_an_object',
  'missing_event_name',
  'missing_conversation_id',
  'invalid_field',
  'unreadable',
] as const;
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

export const QuarantineEntrySchema = z.object({
  /** `q-` + a hash of the raw body: a redelivery of the same body lands on the same entry. */
  id: z.string(),
  receivedAt: z.iso.datetime(),
  reason: z.enum(QUARANTINE_REASONS),
  /** Why, in words (from the normaliser). */
  message: z.string(),
  eventName: z.string().nullable(),
  conversationId: z.string().nullable(),
  /** Size of the body as received, in bytes. */
  bodyBytes: z.number().int().nonnegative(),
  /** True when `body` was cut at the cap; such an entry can be read but not replayed. */
  truncated: z.boolean(),
  /** The raw body as UTF-8 text, up to the cap. */
  body: z.string(),
});
export type QuarantineEntry = z.infer<typeof QuarantineEntrySchema>;

export interface QuarantineStore {
  redis: RedisClient;
  keys: BridgeKeys;
  /** Oldest entries are dropped beyond this many (default 10,000). */
  maxEntries?: number;
  /** Bodies are stored up to this many bytes (default 64 KiB). */
  maxBodyBytes?: number;
  /**
   * Entries older than this are dropped when a new one is added, and the whole quarantine expires
   * this long after its last new entry (`retention.quarantine`; default 30 days).
   */
  maxAgeSeconds?: number;
}

export const DEFAULT_QUARANTINE_MAX = 10_000;
export const DEFAULT_QUARANTINE_BODY_BYTES = 64 * 1024;
/** The schema's default of `retention.quarantine`, for a store built without a config (tools, tests). */
const DEFAULT_MAX_AGE_SECONDS = Math.ceil(parseRetentionSettings().quarantineMs / 1000);

/**
 * KEYS: index zset, entries hash. ARGV: id, score (ms), entry JSON, max entries, max age (s).
 * Keeps the first copy of a body (a redelivery does not reset its time), then trims the oldest
 * beyond the bound and (at most 100 per add, so an add stays cheap) those older than the max age,
 * all in one step so the index and the hash never disagree. Both keys expire max age after the
 * last add: every entry is older than that by then (the max age is retention.quarantine).
 */
const ADD_LUA = `
local added = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
if added == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[1], over)
  for i = 1, #old, 2 do
    redis.call('HDEL', KEYS[2], old[i])
  end
end
local maxAge = tonumber(ARGV[5])
local aged = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[2]) - maxAge * 1000), 'LIMIT', 0, 100)
if #aged > 0 then
  redis.call('ZREM', KEYS[1], unpack(aged))
  redis.call('HDEL', KEYS[2], unpack(aged))
end
redis.call('EXPIRE', KEYS[1], maxAge)
redis.call('EXPIRE', KEYS[2], maxAge)
return added
`;
const addScript = defineRedisScript<number>('QuarantineAdd', 2, ADD_LUA);

export interface QuarantineInput {
  reason: QuarantineReason;
  message: string;
  eventName: string | null;
  conversationId: string | null;
  /** The body exactly as received. */
  rawBody: Buffer;
  receivedAt: Date;
}

export function quarantineId(rawBody: Buffer): string {
  return `q-${createHash('sha256').update(rawBody).digest('hex').slice(0, 24)}`;
}

/** Stores a body in the quarantine; returns its entry (an existing one keeps its first time). */
export async function quarantineBody(
  store: QuarantineStore,
  input: QuarantineInput,
): Promise<{ entry: QuarantineEntry; added: boolean }> {
  const cap = store.maxBodyBytes ?? DEFAULT_QUARANTINE_BODY_BYTES;
  const truncated = input.rawBody.length > cap;
  const entry: QuarantineEntry = {
    id: quarantineId(input.rawBody),
    receivedAt: input.receivedAt.toISOString(),
    reason: input.reason,
    message: input.message,
    eventName: input.eventName,
    conversationId: input.conversationId,
    bodyBytes: input.rawBody.length,
    truncated,
    body: (truncated ? input.rawBody.subarray(0, cap) : input.rawBody).toString('utf8'),
  };
  const added = await addScript(
    store.redis,
    [store.keys.quarantine, store.keys.quarantineEntries],
    [
      entry.id,
      input.receivedAt.getTime(),
      JSON.stringify(entry),
      store.maxEntries ?? DEFAULT_QUARANTINE_MAX,
      store.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS,
    ],
  );
  return { entry, added: added === 1 };
}

/** Entries, newest first (at most `limit`, default 100). */
export async function listQuarantine(
  store: QuarantineStore,
  options: { limit?: number } = {},
): Promise<QuarantineEntry[]> {
  const limit = Math.max(1, Math.min(options.limit ?? 100, 10_000));
  const ids = await store.redis.zrevrange(store.keys.quarantine, 0, limit - 1);
  if (ids.length === 0) return [];
  const values = await store.redis.hmget(store.keys.quarantineEntries, ...ids);
  const entries: QuarantineEntry[] = [];
  for (const [index, value] of values.entries()) {
    if (value !== null) entries.push(parseEntry(value, ids[index] ?? '?'));
  }
  return entries;
}

export async function countQuarantine(store: QuarantineStore): Promise<number> {
  return store.redis.zcard(store.keys.quarantine);
}

/** One entry; throws QUARANTINE_NOT_FOUND when there is none under that id. */
export async function getQuarantined(store: QuarantineStore, id: string): Promise<QuarantineEntry> {
  const value = await store.redis.hget(store.keys.quarantineEntries, id);
  if (value === null) {
    throw new ReceiverError(
      `quarantine entry ${JSON.stringify(id)} was not found under prefix "${store.keys.prefix}": ` +
        'it was replayed, purged or pushed out by newer entries; run `convo-bridge quarantine list` for the ids there are',
      { code: 'QUARANTINE_NOT_FOUND' },
    );
  }
  return parseEntry(value, id);
}

/** Removes one entry; returns whether it was there. */
export async function removeQuarantined(store: QuarantineStore, id: string): Promise<boolean> {
  const result = await store.redis
    .multi()
    .zrem(store.keys.quarantine, id)
    .hdel(store.keys.quarantineEntries, id)
    .exec();
  return (result?.[0]?.[1] ?? 0) === 1;
}

/** Removes every entry; returns how many there were. */
export async function purgeQuarantine(store: QuarantineStore): Promise<number> {
  const result = await store.redis
    .multi()
    .zcard(store.keys.quarantine)
    .del(store.keys.quarantine, store.keys.quarantineEntries)
    .exec();
  const count = result?.[0]?.[1];
  return typeof count === 'number' ? count : 0;
}

function parseEntry(value: string, id: string): QuarantineEntry {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (error) {
    throw new ReceiverError(`quarantine entry ${id} is not valid JSON in RedisClient; remove it with purge`, {
      code: 'QUARANTINE_NOT_REPLAYABLE',
      cause: error,
    });
  }
  const parsed = QuarantineEntrySchema.safeParse(json);
  if (!parsed.success) {
    throw new ReceiverError(
      `quarantine entry ${id} has an unexpected shape in RedisClient (${parsed.error.issues[0]?.message ?? 'invalid'}); ` +
        'it was written by another version; read it with redis-cli HGET',
      { code: 'QUARANTINE_NOT_REPLAYABLE', cause: parsed.error },
    );
  }
  return parsed.data;
}
