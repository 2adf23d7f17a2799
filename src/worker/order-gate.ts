import type { Redis } from 'ioredis';
import { defineRedisScript } from '../shared/redis-script.js';

/**
 * Per-conversation ordering across any number of worker processes (issue "Worker", point 1).
 *
 * The receiver puts each new event's job id in its conversation's sorted set, scored by arrival.
 * A worker may run a job only when it is the head of that set; otherwise the job parks itself as
 * delayed and is promoted by whoever removes the head. Different conversations never wait for
 * each other. BullMQ OSS has no "groups" (that is BullMQ Pro), hence this small protocol.
 *
 * A head whose job no longer exists (the receiver died between reserving and adding it) or that
 * sits in BullMQ's failed set (stalled too often, never reached our dead-letter code) would block
 * its conversation forever: after a grace period such a head is dropped (and reported as
 * `released`), so one lost job can never wedge a conversation.
 */

/**
 * The gate itself, a Lua fragment shared by the standalone check below and by the run's prepare
 * script (prepare-run.ts). It returns {'wait', head} when another job must go first; otherwise it
 * falls through with `released` set to a dropped ghost head ('' when none).
 * KEYS[1] order zset, KEYS[2] ghost-marker prefix. ARGV[1] job id, ARGV[2] job key prefix,
 * ARGV[3] failed zset key, ARGV[4] now ms, ARGV[5] grace ms.
 */
export const GATE_LUA = `
local order = KEYS[1]
local me = ARGV[1]
local released = ''
if redis.call('ZSCORE', order, me) then
  local decided = false
  for i = 1, 50 do
    local head = redis.call('ZRANGE', order, 0, 0)[1]
    if (not head) or head == me then decided = true break end
    local gone = redis.call('EXISTS', ARGV[2] .. head) == 0
    local failed = redis.call('ZSCORE', ARGV[3], head)
    if not gone and not failed then return {'wait', head} end
    local marker = KEYS[2] .. head
    local seen = redis.call('GET', marker)
    if not seen then
      redis.call('SET', marker, ARGV[4], 'PX', 3600000)
      return {'wait', head}
    end
    if tonumber(ARGV[4]) - tonumber(seen) < tonumber(ARGV[5]) then return {'wait', head} end
    redis.call('ZREM', order, head)
    redis.call('DEL', marker)
    released = head
  end
  if not decided then return {'wait', ''} end
end
`;

const ENTER_LUA = `${GATE_LUA}
return {'go', released}
`;

// KEYS: order zset, delayed zset of the queue. ARGV: job id. Removes the job; returns the new
// head ('' when none) and whether it is parked in the delayed set (so the caller promotes it).
const LEAVE_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not head then return {'', 0} end
if redis.call('ZSCORE', KEYS[2], head) then return {head, 1} end
return {head, 0}
`;

const enterScript = defineRedisScript<[string, string]>('OrderEnter', 2, ENTER_LUA);
const leaveScript = defineRedisScript<[string, number]>('OrderLeave', 2, LEAVE_LUA);

export type GateDecision =
  | { kind: 'go'; released: string | null }
  | { kind: 'wait'; blockedBy: string | null };

export interface OrderGateKeys {
  /** The conversation's order zset (bridgeKeys(prefix).order(conversationId)). */
  order: string;
  /** Prefix for ghost markers of this conversation's heads. */
  ghostPrefix: string;
  /** BullMQ's job hash key prefix for the events queue: `<prefix>:events:`. */
  jobKeyPrefix: string;
  /** BullMQ's failed zset of the events queue: `<prefix>:events:failed`. */
  failedSet: string;
}

export async function enterOrderGate(
  redis: Redis,
  keys: OrderGateKeys,
  jobId: string,
  now: number,
  ghostGraceMs: number,
): Promise<GateDecision> {
  const [kind, other] = await enterScript(
    redis,
    [keys.order, keys.ghostPrefix],
    [jobId, keys.jobKeyPrefix, keys.failedSet, now, ghostGraceMs],
  );
  if (kind === 'go') return { kind: 'go', released: other === '' ? null : other };
  return { kind: 'wait', blockedBy: other === '' ? null : other };
}

/**
 * Removes a finished (or dead-lettered) job from its conversation's order; returns the next head
 * and whether it is parked (delayed) waiting for its turn.
 */
export async function leaveOrderGate(
  redis: Redis,
  orderKey: string,
  delayedSet: string,
  jobId: string,
): Promise<{ next: string; parked: boolean } | null> {
  const [head, parked] = await leaveScript(redis, [orderKey, delayedSet], [jobId]);
  return head === '' ? null : { next: head, parked: parked === 1 };
}
