import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type ConversationEvent, ConversationEventSchema } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';
import {
  BURST_TEXT_LIMITS,
  type Burst,
  type BurstSettings,
  burstMessageText,
  keptLastEvent,
  messageHasMedia,
  messageTime,
} from '../../rules/burst.js';
import { CONVERSATION_FIELDS } from '../conversation-facts.js';

/**
 * Where an open burst lives: a registration in the conversation hash, field
 * `B:<rule>`, written by the same script that prepares each event's run (processor/prepare-run.ts,
 * no extra round trip), and a delayed job in the shard's `timers` queue (bursts/burst-job.ts):
 *
 *   (none) --customer message--> `p:<kinds that cancel it>|<burst JSON>` (pending; each further
 *       message updates count, last time, texts, last message)
 *   pending --event of such a kind--> (none: cancelled; its job is removed)
 *   pending --its job, once due--> `c:<key hash of its last message>` (closed), the burst JSON
 *       moved into the run hash of the burst (`keys.run(burst id)`, field `burst`), where the
 *       run's plan and ledger join it; the run hash goes when the actions are done.
 *
 * The closed mark lets a message whose run was cut off after it joined the burst, and which runs
 * again after the burst was taken, see that it was answered (rather than begin a burst of its own);
 * any other message replaces it with a new burst. The burst JSON (`StoredBurst`) holds the texts
 * within BURST_TEXT_LIMITS and the last message (its text cut likewise): docs/privacy.md.
 */

export const BURST_FIELD = CONVERSATION_FIELDS.burst;

export function burstField(rule: string): string {
  return `${BURST_FIELD}${rule}`;
}

/** The burst as the scripts keep it (short keys: it is read with every event of the conversation). */
export const StoredBurstSchema = z.object({
  id: z.string().min(1),
  /** First and last message received (ms). */
  f: z.number(),
  l: z.number(),
  /** Messages in it. */
  n: z.number().int().positive(),
  /** Event key of the first message; key hash of the last one. */
  fk: z.string(),
  k: z.string(),
  /** Kept texts (see BURST_TEXT_LIMITS); `x`: messages whose text was not kept. */
  t: z.array(z.string()),
  x: z.number().int().nonnegative(),
  /** 1 when a message had media. */
  m: z.number(),
  /** The last message, as JSON. */
  e: z.string(),
});
export type StoredBurst = z.infer<typeof StoredBurstSchema>;

/** The burst of a stored JSON text, or undefined when it is not one (logged by the caller). */
export function parseStoredBurst(json: string): { stored: StoredBurst; burst: Burst } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const parsed = StoredBurstSchema.safeParse(value);
  if (!parsed.success) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(parsed.data.e);
  } catch {
    return undefined;
  }
  const last = ConversationEventSchema.safeParse(event);
  if (!last.success) return undefined;
  const s = parsed.data;
  return {
    stored: s,
    burst: {
      count: s.n,
      texts: s.t,
      droppedTexts: s.x,
      hasMedia: s.m === 1,
      firstAt: new Date(s.f).toISOString(),
      lastAt: new Date(s.l).toISOString(),
      firstEventKey: s.fk,
      lastEvent: last.data,
    },
  };
}

/** A registration as `timers list` reads it. */
export type BurstRegistration =
  | { state: 'pending'; unless: string[]; stored: StoredBurst; burst: Burst }
  | { state: 'closed' };

export function parseBurstRegistration(value: string | null): BurstRegistration | undefined {
  if (value === null) return undefined;
  if (value.startsWith('c:')) return { state: 'closed' };
  const bar = value.indexOf('|');
  if (!value.startsWith('p:') || bar === -1) return undefined;
  const parsed = parseStoredBurst(value.slice(bar + 1));
  if (!parsed) return undefined;
  const kinds = value.slice(2, bar);
  return { state: 'pending', unless: kinds === '' ? [] : kinds.split(','), ...parsed };
}

/**
 * Lua functions of the prepare script (processor/prepare-run.ts): `burst_cancels(state, kind)`,
 * `burst_id(state)` and `burst_note(conv, found, arg)`, which adds a customer message to each
 * debounced rule's burst (`arg`: the JSON of `burstArg`; `found`: the conversation's `B:` fields as
 * read) and returns `{rule, burst id}` pairs of the bursts this message began (also when it runs
 * again before anything else joined them), whose jobs the run adds.
 */
export const BURST_LUA = `
local function burst_parts(state)
  local bar = string.find(state, '|', 3, true)
  if not bar then return nil, nil end
  return string.sub(state, 3, bar - 1), string.sub(state, bar + 1)
end
local function burst_cancels(state, kind)
  local kinds = burst_parts(state)
  return kinds ~= nil and string.find(',' .. kinds .. ',', ',' .. kind .. ',', 1, true) ~= nil
end
local function burst_decode(body)
  if not body then return nil end
  local ok, b = pcall(cjson.decode, body)
  if ok and type(b) == 'table' and type(b.t) == 'table' and b.id then return b end
  return nil
end
local function burst_id(state)
  local _, body = burst_parts(state)
  local b = burst_decode(body)
  return b and b.id or ''
end
local function burst_note(conv, found, arg)
  local s = cjson.decode(arg)
  local started = {}
  for _, r in ipairs(s.r) do
    local field = '${BURST_FIELD}' .. r[1]
    local cur = found[field]
    local kinds, body = nil, nil
    if cur and string.sub(cur, 1, 2) == 'p:' then kinds, body = burst_parts(cur) end
    local b = burst_decode(body)
    if b then
      if b.k ~= s.k then
        b.n = b.n + 1
        if s.at > b.l then b.l = s.at end
        b.k = s.k
        b.e = s.e
        if s.m == 1 then b.m = 1 end
        local size = 0
        for _, t in ipairs(b.t) do size = size + #t end
        if #b.t < ${BURST_TEXT_LIMITS.keptMessages} and size + #s.t <= ${BURST_TEXT_LIMITS.keptBytes} then
          b.t[#b.t + 1] = s.t
        else
          b.x = b.x + 1
        end
        redis.call('HSET', conv, field, 'p:' .. kinds .. '|' .. cjson.encode(b))
      elseif b.n == 1 then
        started[#started + 1] = r[1]
        started[#started + 1] = b.id
      end
    elseif cur ~= 'c:' .. s.k then
      local fresh = {id = r[2], f = s.at, l = s.at, n = 1, fk = s.fk, k = s.k, t = {s.t}, x = 0, m = s.m, e = s.e}
      redis.call('HSET', conv, field, 'p:' .. r[3] .. '|' .. cjson.encode(fresh))
      started[#started + 1] = r[1]
      started[#started + 1] = r[2]
    end
  end
  -- The hash outlives every open burst, whatever retention.conversations says.
  if redis.call('PTTL', conv) < s.w then redis.call('PEXPIRE', conv, s.w) end
  return started
end
`;

/** A debounced rule as the worker's rules port lists it. */
export interface BurstRule {
  rule: string;
  settings: BurstSettings;
}

/** What the prepare script gets for a customer message, and the rules it was built from. */
export interface BurstArg {
  arg: string;
  rules: readonly BurstRule[];
}

function keyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * The prepare script's burst argument of an event: for a customer message of a conversation and a
 * rule set with debounced rules, the message as a burst keeps it and each rule with a fresh burst
 * id (used only if the message begins a burst); undefined otherwise (the script does nothing).
 */
export function burstArg(event: ConversationEvent, rules: readonly BurstRule[]): BurstArg | undefined {
  if (event.kind !== 'message_in' || rules.length === 0 || event.conversationId === null) return undefined;
  const arg = {
    k: keyHash(event.key),
    fk: event.key,
    at: messageTime(event),
    t: burstMessageText(event),
    m: messageHasMedia(event) ? 1 : 0,
    e: JSON.stringify(keptLastEvent(event)),
    r: rules.map((r) => [r.rule, `bu-${randomUUID().replaceAll('-', '')}`, r.settings.unless.join(',')]),
    // ms the conversation hash must live at least: the longest max_wait and an hour.
    w: Math.max(...rules.map((r) => r.settings.maxWaitMs)) + 3_600_000,
  };
  return { arg: JSON.stringify(arg), rules };
}

// KEYS: conversation hash, the burst's run hash. ARGV: burst field, burst id, now ms, debounce
// ms, max_wait ms, run ttl seconds. Returns {'go', burst JSON} (taken now, or by an earlier run of
// the job), {'wait', due ms} (not quiet long enough yet) or {'cancelled', ''}.
const CLAIM_LUA = `
local kept = redis.call('HGET', KEYS[2], 'burst')
if kept then return {'go', kept} end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (not cur) or string.sub(cur, 1, 2) ~= 'p:' then return {'cancelled', ''} end
local bar = string.find(cur, '|', 3, true)
if not bar then return {'cancelled', ''} end
local body = string.sub(cur, bar + 1)
local ok, b = pcall(cjson.decode, body)
if (not ok) or type(b) ~= 'table' or b.id ~= ARGV[2] then return {'cancelled', ''} end
local due = math.min(b.l + tonumber(ARGV[4]), b.f + tonumber(ARGV[5]))
if tonumber(ARGV[3]) < due then return {'wait', due} end
redis.call('HSET', KEYS[1], ARGV[1], 'c:' .. b.k)
redis.call('HSET', KEYS[2], 'burst', body)
redis.call('EXPIRE', KEYS[2], ARGV[6])
return {'go', body}
`;
const claimScript = defineRedisScript<[string, string | number]>('BurstClaim', 2, CLAIM_LUA);

export type BurstClaim =
  | { kind: 'go'; stored: StoredBurst; burst: Burst }
  | { kind: 'wait'; dueAt: number }
  | { kind: 'cancelled' }
  | { kind: 'unreadable' };

/**
 * Takes a due burst for evaluation, atomically: it leaves the conversation hash (a message that
 * arrives from now on begins the next burst) for the burst's run hash. Not due yet (a message
 * extended it): when it is. Gone (an agent replied, or it is not this job's): cancelled.
 */
export async function claimBurst(
  redis: RedisClient,
  keys: BridgeKeys,
  input: {
    conversationId: string;
    rule: string;
    burstId: string;
    settings: BurstSettings;
    now: number;
    /** The expiry of the run state it moves to (a run not finished: store-ttls.ts). */
    runSeconds: number;
  },
): Promise<BurstClaim> {
  const [kind, value] = await claimScript(
    redis,
    [keys.conversation(input.conversationId), keys.run(input.burstId)],
    [
      burstField(input.rule),
      input.burstId,
      input.now,
      input.settings.debounceMs,
      input.settings.maxWaitMs,
      input.runSeconds,
    ],
  );
  if (kind === 'wait') return { kind: 'wait', dueAt: Number(value) };
  if (kind !== 'go') return { kind: 'cancelled' };
  const parsed = parseStoredBurst(String(value));
  return parsed ? { kind: 'go', ...parsed } : { kind: 'unreadable' };
}

/** A taken burst, read back for a replay of its dead letter. */
export async function readTakenBurst(
  redis: RedisClient,
  keys: BridgeKeys,
  burstId: string,
): Promise<{ stored: StoredBurst; burst: Burst } | undefined> {
  const json = await redis.hget(keys.run(burstId), 'burst');
  return json === null ? undefined : parseStoredBurst(json);
}

/** A fired burst is done: its run hash goes (a dead letter keeps it this long for a replay). */
export async function releaseBurst(
  redis: RedisClient,
  keys: BridgeKeys,
  burstId: string,
  keepRunSeconds: number,
): Promise<void> {
  if (keepRunSeconds > 0) await redis.expire(keys.run(burstId), keepRunSeconds);
  else await redis.del(keys.run(burstId));
}
