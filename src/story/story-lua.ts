import type { BridgeKeys } from '../queue/redis-keys.js';
import { FIRST_REPLY_BUCKETS_MS, META_FIELDS, STATS_FIELDS, type StoryWrite } from './build-story-write.js';

/**
 * The story's part of a finish step: a Lua function that a finish script (worker/processor/order-gate.ts,
 * the timers' release) defines and calls with the KEYS and ARGV that `storyScriptInput` builds, so
 * that the story costs no Redis command of its own. Every key is of the conversation's shard (its
 * hash tag), the slot the finish script runs in.
 *
 * write_story(k, a): KEYS[k..k+3] the story list, its summary hash, the shard's story index and the
 * hour's stats bucket, then one key per term. ARGV[a] is 0 when there is nothing to write (the
 * story is off), else 1, and then: number of entries, number of terms, now ms, ttl ms, max entries,
 * conversation id, events to count, escalated (1/0), agent reply (1/0), then the entries, the
 * number of summary fields to set and them, the number to delete and them, the number of stats
 * fields and them with their increments.
 * Returns the ARGV index after its own.
 */
export const STORY_LUA = `
local FR_BOUNDS = {${FIRST_REPLY_BUCKETS_MS.join(',')}}
local function write_story(k, a)
  if ARGV[a] ~= '1' then return a + 1 end
  a = a + 1
  local nent, nterm = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local now, ttl, max, conv = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), ARGV[a + 5]
  local nev, escalated, agent = tonumber(ARGV[a + 6]), ARGV[a + 7], ARGV[a + 8]
  local list, meta, index, stats = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local i = a + 9
  if nent > 0 then
    local entries = {}
    for j = 1, nent do entries[j] = ARGV[i + j - 1] end
    i = i + nent
    redis.call('RPUSH', list, unpack(entries))
    redis.call('LTRIM', list, -max, -1)
    redis.call('PEXPIRE', list, ttl)
    redis.call('HINCRBY', meta, '${META_FIELDS.entries}', nent)
  end
  local nset = tonumber(ARGV[i]); i = i + 1
  if nset > 0 then
    local pairs_ = {}
    for j = 1, 2 * nset do pairs_[j] = ARGV[i + j - 1] end
    i = i + 2 * nset
    redis.call('HSET', meta, unpack(pairs_))
  end
  local ndel = tonumber(ARGV[i]); i = i + 1
  if ndel > 0 then
    local dels = {}
    for j = 1, ndel do dels[j] = ARGV[i + j - 1] end
    i = i + ndel
    redis.call('HDEL', meta, unpack(dels))
  end
  -- The conversation's terms: the new ones join those it has, and every one gets its new activity
  -- time, so that any term's set orders conversations by their last activity.
  local known = redis.call('HGET', meta, '${META_FIELDS.terms}') or ''
  local terms, seen = {}, {}
  for key in string.gmatch(known, '[^\\n]+') do
    if not seen[key] then seen[key] = true; terms[#terms + 1] = key end
  end
  local grew = false
  for j = 1, nterm do
    local key = KEYS[k + 3 + j]
    if not seen[key] and #terms < 500 then seen[key] = true; terms[#terms + 1] = key; grew = true end
  end
  if grew then redis.call('HSET', meta, '${META_FIELDS.terms}', table.concat(terms, '\\n')) end
  terms[#terms + 1] = index
  for _, key in ipairs(terms) do
    redis.call('ZADD', key, now, conv)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - ttl)
    redis.call('PEXPIRE', key, ttl)
  end
  redis.call('HSET', meta, '${META_FIELDS.id}', conv, '${META_FIELDS.lastAt}', now)
  redis.call('HSETNX', meta, '${META_FIELDS.firstAt}', now)
  if nev > 0 then redis.call('HINCRBY', meta, '${META_FIELDS.events}', nev) end
  local nstat = tonumber(ARGV[i]); i = i + 1
  for j = 1, nstat do
    redis.call('HINCRBY', stats, ARGV[i], ARGV[i + 1])
    i = i + 2
  end
  if agent == '1' then
    local since = redis.call('HGET', meta, '${META_FIELDS.needHumanAt}')
    if since then
      local waited = now - tonumber(since)
      local b = #FR_BOUNDS
      for j = 1, #FR_BOUNDS do if waited <= FR_BOUNDS[j] then b = j - 1; break end end
      redis.call('HINCRBY', stats, '${STATS_FIELDS.firstReply}' .. b, 1)
      redis.call('HDEL', meta, '${META_FIELDS.needHumanAt}')
    end
  end
  if escalated == '1' then redis.call('HSETNX', meta, '${META_FIELDS.needHumanAt}', now) end
  redis.call('PEXPIRE', meta, ttl)
  redis.call('PEXPIRE', stats, ttl)
  return i
end
`;

/** The KEYS and ARGV of write_story for one write. */
export interface StoryScriptInput {
  keys: string[];
  args: (string | number)[];
}

/** Nothing to write: the story is off (one ARGV, no KEYS). */
export const NO_STORY: StoryScriptInput = Object.freeze({ keys: [], args: [0] }) as StoryScriptInput;

export const HOUR_MS = 3_600_000;

export function storyScriptInput(
  keys: BridgeKeys,
  conversationId: string,
  write: StoryWrite,
  options: { now: number; ttlMs: number; maxEntries: number; events: number },
): StoryScriptInput {
  const terms = [...new Set(write.terms)];
  const set = Object.entries(write.metaSet).flat();
  const stats = Object.entries(write.stats).flat();
  return {
    keys: [
      keys.story(conversationId),
      keys.storyMeta(conversationId),
      keys.storyIndex,
      keys.storyStats(Math.floor(options.now / HOUR_MS)),
      ...terms.map((term) => keys.storyTerm(term)),
    ],
    args: [
      1,
      write.entries.length,
      terms.length,
      options.now,
      options.ttlMs,
      options.maxEntries,
      conversationId,
      options.events,
      write.escalated ? 1 : 0,
      write.agentReply ? 1 : 0,
      ...write.entries,
      set.length / 2,
      ...set,
      write.metaDel.length,
      ...write.metaDel,
      stats.length / 2,
      ...stats,
    ],
  };
}

/** write_story on its own, for a finish step that is a MULTI (a fired timer's): one EVAL in it. */
export const STORY_ALONE_LUA = `${STORY_LUA}
write_story(1, 1)
return 1
`;
