import type { ConversationEvent } from '../../events/conversation-event.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';
import { NO_STORY, STORY_LUA, type StoryScriptInput } from '../../story/story-lua.js';
import type { StorePort } from './processor-deps.js';

/**
 * Per-conversation ordering across any number of worker processes (issue "Worker", point 1).
 *
 * The receiver puts each new event in its conversation's sorted set, scored by arrival, as
 * `<batch job id>|<event id>` (queue/redis-keys.ts orderMember). An event may run only when it is
 * the head of that set; a batch job whose events have to wait parks itself as delayed and is
 * promoted by whoever removes the head. Different conversations never wait for each other. BullMQ
 * OSS has no "groups" (that is BullMQ Pro), hence this small protocol.
 *
 * An event that is not in the set any more was processed, dead-lettered, or taken over by a
 * redelivery in another batch (queue/ingest-event.ts): its run is skipped.
 *
 * A head whose job no longer exists (the receiver died between reserving and adding it) or that
 * sits in BullMQ's failed set (stalled too often, never reached our dead-letter code) would block
 * its conversation forever: after a grace period such a head is dropped (and reported as
 * `released`), and its dedupe marker with it so that a redelivery is taken as new.
 */

/**
 * The gate, a Lua function shared by the scripts of prepare-run.ts. `gate(order, me, job)`
 * returns 'go', 'skip' (not in the set), 'chain' (an earlier event of the same batch job goes
 * first) or 'wait', and the head that blocks it or the ghost head it dropped ('' when none).
 * ARGV[1] job key prefix (`<prefix>:events:`), ARGV[2] failed zset key, ARGV[3] dedupe key prefix,
 * ARGV[4] now ms, ARGV[5] grace ms.
 */
export const GATE_LUA = `
local function owner_of(member)
  local bar = string.find(member, '|', 1, true)
  if not bar then return member, '' end
  return string.sub(member, 1, bar - 1), string.sub(member, bar + 1)
end
local function gate(order, me, job)
  local released = ''
  for i = 1, 50 do
    local head = redis.call('ZRANGE', order, 0, 0)[1]
    if head == me then return 'go', released end
    if (not head) or (not redis.call('ZSCORE', order, me)) then return 'skip', released end
    local owner, id = owner_of(head)
    if owner == job then return 'chain', head end
    local gone = redis.call('EXISTS', ARGV[1] .. owner) == 0
    local failed = redis.call('ZSCORE', ARGV[2], owner)
    if not gone and not failed then return 'wait', head end
    local marker = order .. ':ghost:' .. head
    local seen = redis.call('GET', marker)
    if not seen then
      redis.call('SET', marker, ARGV[4], 'PX', 3600000)
      return 'wait', head
    end
    if tonumber(ARGV[4]) - tonumber(seen) < tonumber(ARGV[5]) then return 'wait', head end
    redis.call('ZREM', order, head)
    redis.call('DEL', marker)
    if id ~= '' then redis.call('DEL', ARGV[3] .. id) end
    released = head
  end
  return 'wait', ''
end
`;

/** How long a job parked behind an earlier event of its conversation sleeps before looking again. */
export const ORDER_RECHECK_MS = 2_000;

/** How long a vanished or failed head may block its conversation before it is dropped. */
export const GHOST_GRACE_MS = 30_000;

/**
 * Longest a due timer or burst waits for the events that reached the receiver before it (an agent
 * reply still queued must be able to cancel it) before it runs anyway.
 */
export const MAX_WAIT_FOR_EARLIER_EVENTS_MS = 60_000;

export type GateDecision =
  | { kind: 'go'; released: string | null }
  | { kind: 'skip' }
  | { kind: 'chain'; after: string }
  | { kind: 'wait'; blockedBy: string | null };

/** The batch job id of an order member (`<job id>|<event id>`). */
export function memberJobId(member: string): string {
  const bar = member.indexOf('|');
  return bar === -1 ? member : member.slice(0, bar);
}

/**
 * A finished (or dead-lettered) event leaves its conversation's order, and the conversation hash
 * gets what the run learnt (sent texts, once-marks, cooldowns, tags) minus stale sent-text marks,
 * expired tags and the run's untags; the run's own state (plan, ledger) is deleted or, for a dead
 * letter, kept for a replay.
 * KEYS: order zset, conversation hash, run hash, delayed zset of the queue, then the story's
 * (story/story-lua.ts).
 * ARGV: member, run ttl seconds (0: delete the run's state), conversation ttl seconds (0: leave
 * it; else given to the hash, never shortening it, so that a timer this run set keeps its
 * registration until it is due), number of fields to set, number of fields to delete, then the
 * fields and values, then the fields to delete, then the story's.
 * Returns the new head ('' when none) and whether its job is parked in the delayed set.
 */
const LEAVE_LUA = `${STORY_LUA}
redis.call('ZREM', KEYS[1], ARGV[1])
local nset, ndel = tonumber(ARGV[4]), tonumber(ARGV[5])
if nset > 0 then
  local args = {}
  for i = 6, 5 + 2 * nset do args[#args + 1] = ARGV[i] end
  redis.call('HSET', KEYS[2], unpack(args))
end
if ndel > 0 then
  local dels = {}
  for i = 6 + 2 * nset, 5 + 2 * nset + ndel do dels[#dels + 1] = ARGV[i] end
  redis.call('HDEL', KEYS[2], unpack(dels))
end
local ttl = tonumber(ARGV[3]) * 1000
if ttl > 0 and redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[3], ARGV[2]) else redis.call('DEL', KEYS[3]) end
write_story(5, 6 + 2 * nset + ndel)
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not head then return {'', 0} end
local bar = string.find(head, '|', 1, true)
local owner = bar and string.sub(head, 1, bar - 1) or head
if redis.call('ZSCORE', KEYS[4], owner) then return {head, 1} end
return {head, 0}
`;
const leaveScript = defineRedisScript<[string, number]>('OrderLeave', 'any', LEAVE_LUA);

export interface LeaveInput {
  orderKey: string;
  conversationKey: string;
  runKey: string;
  delayedSet: string;
  member: string;
  /** Keep the run's state this long (a dead letter keeps its ledger for a replay); 0 deletes it. */
  keepRunSeconds: number;
  /**
   * Give the conversation hash this TTL (it did not exist before the run: what the run wrote to it,
   * here or in a flush on the way, must not stay forever) unless it has a longer one (a timer the
   * run set); 0: leave it.
   */
  conversationTtlSeconds: number;
  set: Record<string, string>;
  remove: readonly string[];
  /** What the conversation's story gets (story/story-lua.ts); NO_STORY when nothing. */
  story?: StoryScriptInput;
}

/**
 * Removes a finished (or dead-lettered) event from its conversation's order; returns the next
 * head and whether its job is parked (delayed) waiting for its turn.
 */
export async function leaveOrderGate(
  redis: RedisClient,
  input: LeaveInput,
): Promise<{ next: string; parked: boolean } | null> {
  const fields = Object.entries(input.set).flat();
  const story = input.story ?? NO_STORY;
  const [head, parked] = await leaveScript(
    redis,
    [input.orderKey, input.conversationKey, input.runKey, input.delayedSet, ...story.keys],
    [
      input.member,
      input.keepRunSeconds,
      input.conversationTtlSeconds,
      fields.length / 2,
      input.remove.length,
      ...fields,
      ...input.remove,
      ...story.args,
    ],
  );
  return head === '' ? null : { next: head, parked: parked === 1 };
}

/**
 * Leaves the conversation's order and wakes the next event's job when it is parked (an event's
 * run is done, or it was dead-lettered). The next event of the same batch is run by the batch itself.
 */
export async function leaveOrder(
  deps: Pick<StorePort, 'redis' | 'keys' | 'eventsQueue'>,
  event: ConversationEvent,
  me: string,
  keepRunSeconds: number,
  set: Record<string, string>,
  remove: readonly string[],
  conversationTtlSeconds = 0,
  story: StoryScriptInput = NO_STORY,
): Promise<void> {
  const c = event.conversationId ?? '';
  const next = await leaveOrderGate(deps.redis, {
    orderKey: deps.keys.order(c),
    conversationKey: deps.keys.conversation(c),
    runKey: deps.keys.run(event.key),
    delayedSet: `${deps.eventsQueue.qualifiedName}:delayed`,
    member: me,
    keepRunSeconds,
    conversationTtlSeconds,
    set,
    remove,
    story,
  });
  if (next?.parked && memberJobId(next.next) !== memberJobId(me)) {
    await (await deps.eventsQueue.getJob(memberJobId(next.next)))?.promote().catch(() => undefined);
  }
}

// KEYS: order zsets. ARGV: the gate's ARGV (see GATE_LUA), batch job id, then one member per key.
const CHECK_LUA = `${GATE_LUA}
local out = {}
for i = 1, #KEYS do out[i] = (gate(KEYS[i], ARGV[6 + i], ARGV[6])) end
return out
`;
const checkScript = defineRedisScript<string[]>('OrderCheck', 'any', CHECK_LUA);

/**
 * The gate alone for a few events (a batch that parked looks once more, in case the head left
 * between its check and its park). Returns each event's decision kind.
 */
export async function checkOrderGate(
  redis: RedisClient,
  input: {
    jobKeyPrefix: string;
    failedSet: string;
    dedupePrefix: string;
    now: number;
    ghostGraceMs: number;
    jobId: string;
    events: readonly { orderKey: string; member: string }[];
  },
): Promise<GateDecision['kind'][]> {
  const kinds = await checkScript(
    redis,
    input.events.map((e) => e.orderKey),
    [
      input.jobKeyPrefix,
      input.failedSet,
      input.dedupePrefix,
      input.now,
      input.ghostGraceMs,
      input.jobId,
      ...input.events.map((e) => e.member),
    ],
  );
  return kinds.map((k) => String(k) as GateDecision['kind']);
}
