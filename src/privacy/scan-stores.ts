import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';

/**
 * Finding one conversation's or one customer's entries in the bridge's stores without copying
 * the stores to the client: each script call looks at one chunk (a few hundred entries) inside
 * Redis and returns only the ids whose stored JSON holds one of the needles, so a store of 100,000
 * entries is searched in about a thousand short calls (100 entries each) that never block Redis for long. The match is a
 * coarse filter: callers confirm each candidate on the parsed entry.
 *
 * Modes: `plain` (the value as stored), `lower` (lower-cased, for e-mail addresses), `digits`
 * (every non-digit removed, for phone numbers written with spaces, dots or dashes).
 */
const PREPARE_VALUE_LUA = `
local function prepared(value, mode)
  if mode == 'lower' then return string.lower(value) end
  if mode == 'digits' then return (string.gsub(value, '%D', '')) end
  return value
end
local function holds(value, mode, first)
  local v = prepared(value, mode)
  for n = first, #ARGV do
    if string.find(v, ARGV[n], 1, true) then return true end
  end
  return false
end
`;

/** KEYS: a hash. ARGV: cursor, count, mode, needles... Returns {next cursor, field, field, ...}. */
const HASH_FIND_LUA = `${PREPARE_VALUE_LUA}
local res = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local out = {res[1]}
local kv = res[2]
for i = 1, #kv, 2 do
  if holds(kv[i + 1], ARGV[3], 4) then out[#out + 1] = kv[i] end
end
return out
`;
const hashFindScript = defineRedisScript<string[]>('PrivacyHashFind', 1, HASH_FIND_LUA);

/**
 * KEYS: a BullMQ state key (a list or a zset of job ids). ARGV: job key prefix (`<prefix>:<queue>:`),
 * 'list' or 'zset', start index, count, mode, needles... Looks at the `data`, `returnvalue` and
 * `failedReason` of each job; returns {ids looked at, id, id, ...}.
 */
const JOBS_FIND_LUA = `${PREPARE_VALUE_LUA}
local ids
if ARGV[2] == 'list' then
  ids = redis.call('LRANGE', KEYS[1], ARGV[3], tonumber(ARGV[3]) + tonumber(ARGV[4]) - 1)
else
  ids = redis.call('ZRANGE', KEYS[1], ARGV[3], tonumber(ARGV[3]) + tonumber(ARGV[4]) - 1)
end
local out = {#ids}
for i = 1, #ids do
  local fields = redis.call('HMGET', ARGV[1] .. ids[i], 'data', 'returnvalue', 'failedReason')
  for f = 1, 3 do
    if fields[f] and holds(fields[f], ARGV[5], 6) then out[#out + 1] = ids[i]; break end
  end
end
return out
`;
const jobsFindScript = defineRedisScript<(string | number)[]>('PrivacyJobsFind', 1, JOBS_FIND_LUA);

export type MatchMode = 'plain' | 'lower' | 'digits';

export interface Needles {
  mode: MatchMode;
  /** Substrings (already lower-cased or digits-only for those modes); an entry holding any matches. */
  values: readonly string[];
}

/** Entries per script call: about half a millisecond of Redis time each (npm run bench:forget). */
const CHUNK = 100;

/** Fields of a hash whose value holds one of the needles. */
export async function findInHash(redis: RedisClient, key: string, needles: Needles): Promise<string[]> {
  if (needles.values.length === 0) return [];
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, ...fields] = await hashFindScript(
      redis,
      [key],
      [cursor, CHUNK, needles.mode, ...needles.values],
    );
    cursor = next ?? '0';
    for (const field of fields) found.add(field);
  } while (cursor !== '0');
  return [...found];
}

/** The BullMQ job states whose jobs may hold an event (an active job's data is read by its worker). */
export const JOB_STATES = [
  { state: 'wait', type: 'list' },
  { state: 'paused', type: 'list' },
  { state: 'active', type: 'list' },
  { state: 'delayed', type: 'zset' },
  { state: 'prioritized', type: 'zset' },
  { state: 'waiting-children', type: 'zset' },
  { state: 'completed', type: 'zset' },
  { state: 'failed', type: 'zset' },
] as const;
export type JobState = (typeof JOB_STATES)[number]['state'];

/**
 * Ids of the jobs of one queue (`<prefix>:<queue>`) whose data, return value or failure holds a
 * needle, per state. Ids may move between states while this runs: callers search again after
 * erasing until nothing is found.
 */
export async function findJobs(
  redis: RedisClient,
  queueKey: string,
  needles: Needles,
  states: readonly JobState[] = JOB_STATES.map((s) => s.state),
): Promise<Map<string, JobState>> {
  const found = new Map<string, JobState>();
  if (needles.values.length === 0) return found;
  for (const { state, type } of JOB_STATES) {
    if (!states.includes(state)) continue;
    for (let start = 0; ; start += CHUNK) {
      const [looked, ...ids] = await jobsFindScript(
        redis,
        [`${queueKey}:${state}`],
        [`${queueKey}:`, type, start, CHUNK, needles.mode, ...needles.values],
      );
      for (const id of ids) found.set(String(id), state);
      if (Number(looked) < CHUNK) break;
    }
  }
  return found;
}
