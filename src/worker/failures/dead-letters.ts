import type { Queue } from 'bullmq';
import { z } from 'zod';
import { ConvoBridgeError } from '../../base/errors.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { DEFAULT_STORE_TTLS } from '../store-ttls.js';

/**
 * Dead letters: events (or timers) that exhausted their attempts, or whose actions the platform
 * rejected for good, kept with the reason so a person can look and replay them
 * (`convo-bridge dlq list|show|retry|purge`). Replaying re-runs the job; the action ledger makes
 * the actions that already happened no-ops, so a replay never repeats them.
 */
export const DeadLetterSchema = z.object({
  id: z.string(),
  queue: z.enum(['events', 'timers']),
  jobId: z.string(),
  jobName: z.string(),
  reason: z.string(),
  code: z.string(),
  attempts: z.number().int().nonnegative(),
  failedAt: z.string(),
  conversationId: z.string().nullable(),
  eventKey: z.string().nullable(),
  /** The job's data as it was (validated again when replayed). */
  data: z.unknown(),
  /** What happened to each action, for the person reading it. */
  actions: z
    .array(z.object({ id: z.string(), state: z.string(), detail: z.string().optional() }))
    .default([]),
  replays: z.number().int().nonnegative().default(0),
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

export class DeadLetterNotFoundError extends ConvoBridgeError {
  constructor(id: string) {
    super(`no dead letter with id "${id}": run \`convo-bridge dlq list\` to see the ids`, {
      code: 'DEAD_LETTER_NOT_FOUND',
    });
  }
}

/**
 * Stores a dead letter for `ttlSeconds` (`retention.dead_letters`: they are meant to be looked at,
 * not to pile up forever). The index drops the ids of entries that have expired since (by their
 * time: bounded by what expired, each id once) and expires with the last entry.
 */
export async function addDeadLetter(
  redis: RedisClient,
  keys: BridgeKeys,
  entry: DeadLetter,
  ttlSeconds: number = DEFAULT_STORE_TTLS.deadLetterSeconds,
): Promise<void> {
  const failedAt = Date.parse(entry.failedAt);
  await redis
    .multi()
    .set(keys.dead(entry.id), JSON.stringify(entry), 'EX', ttlSeconds)
    .zadd(keys.deadIndex, failedAt, entry.id)
    .zremrangebyscore(keys.deadIndex, '-inf', `(${failedAt - ttlSeconds * 1000}`)
    .expire(keys.deadIndex, ttlSeconds)
    .exec();
}

export async function countDeadLetters(redis: RedisClient, keys: BridgeKeys): Promise<number> {
  return redis.zcard(keys.deadIndex);
}

export async function listDeadLetters(
  redis: RedisClient,
  keys: BridgeKeys,
  options: { offset?: number; limit?: number } = {},
): Promise<DeadLetter[]> {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 50;
  const ids = await redis.zrevrange(keys.deadIndex, offset, offset + limit - 1);
  if (ids.length === 0) return [];
  const raws = await redis.mget(ids.map((id) => keys.dead(id)));
  const entries: DeadLetter[] = [];
  const expired: string[] = [];
  raws.forEach((raw, index) => {
    const parsed = raw ? DeadLetterSchema.safeParse(JSON.parse(raw)) : undefined;
    if (parsed?.success) entries.push(parsed.data);
    else if (!raw) expired.push(ids[index] ?? '');
  });
  if (expired.length > 0) await redis.zrem(keys.deadIndex, ...expired);
  return entries;
}

export async function getDeadLetter(redis: RedisClient, keys: BridgeKeys, id: string): Promise<DeadLetter> {
  const raw = await redis.get(keys.dead(id));
  if (!raw) throw new DeadLetterNotFoundError(id);
  return DeadLetterSchema.parse(JSON.parse(raw));
}

export class DeadLetterBusyError extends ConvoBridgeError {
  constructor(id: string) {
    super(
      `dead letter "${id}" is being retried by another request right now: list the dead letters again in a minute`,
      {
        code: 'DEAD_LETTER_BUSY',
      },
    );
  }
}

/** How long a retry holds a dead letter's claim: far longer than one add and one delete take. */
const CLAIM_SECONDS = 60;

/**
 * Puts the job back on its queue under a fresh id and removes the dead letter. Two retries of one
 * dead letter at once (two operators, a CLI and the API) never both add it: each claims it first,
 * and the loser is told so (DeadLetterBusyError); once it is removed, a late one finds nothing.
 */
export async function retryDeadLetter(
  redis: RedisClient,
  keys: BridgeKeys,
  queuesOf: (conversationId: string) => { events: Queue; timers: Queue },
  id: string,
): Promise<{ jobId: string }> {
  if ((await redis.set(keys.deadClaim(id), '1', 'EX', CLAIM_SECONDS, 'NX')) === null) {
    throw new DeadLetterBusyError(id);
  }
  try {
    const entry = await getDeadLetter(redis, keys, id);
    const queues = queuesOf(entry.conversationId ?? '');
    const replay = entry.replays + 1;
    // From the dead letter's own id: one batch job may leave several dead letters.
    const jobId = `${entry.id}-replay${replay}`;
    // `replay` tells the processor to try again the actions that failed for good last time.
    const data =
      typeof entry.data === 'object' && entry.data !== null ? { ...entry.data, replay } : entry.data;
    await queues[entry.queue].add(entry.jobName, data, { jobId });
    await redis.multi().del(keys.dead(id)).zrem(keys.deadIndex, id).exec();
    return { jobId };
  } finally {
    await redis.del(keys.deadClaim(id));
  }
}

/** Deletes one dead letter, or all of them; returns how many were removed. */
export async function purgeDeadLetters(redis: RedisClient, keys: BridgeKeys, id?: string): Promise<number> {
  if (id !== undefined) {
    const removed = await redis.zrem(keys.deadIndex, id);
    await redis.del(keys.dead(id));
    if (removed === 0) throw new DeadLetterNotFoundError(id);
    return removed;
  }
  let total = 0;
  for (;;) {
    const ids = await redis.zrange(keys.deadIndex, 0, 499);
    if (ids.length === 0) return total;
    await redis
      .multi()
      .del(...ids.map((x) => keys.dead(x)))
      .zrem(keys.deadIndex, ...ids)
      .exec();
    total += ids.length;
  }
}
