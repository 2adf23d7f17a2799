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

// KEYS: order zset, ghost-marker prefix. ARGV: job id, job key prefix, failed zset key, now ms, grace ms.
const ENTER_LUA = `
local order = KEYS[1]
local me = ARGV[1]
if not redis.call('ZSCORE', order, me) then return {'go', ''} end
local released = ''
for i = 1, 50 do
  local head = redis.call('ZRANGE', order, 0, 0)[1]
  if (not head) or head == me then return {'go', released} end
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
return {'wait', ''}
`;

// KEYS: order zset. ARGV: job id. Removes the job and returns the new head (or '').
const LEAVE_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if head then return head end
return ''
`;

const enterScript = defineRedisScript<[string, string]>('OrderEnter', 2, ENTER_LUA);
const leaveScript = defineRedisScript<string>('OrderLeave', 1, LEAVE_LUA);

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

/** Removes a finished (or dead-lettered) job from its conversation's order; returns the next head. */
export async function leaveOrderGate(redis: Redis, orderKey: string, jobId: string): Promise<string | null> {
  const head = await leaveScript(redis, [orderKey], [jobId]);
  return head === '' ? null : head;
}
