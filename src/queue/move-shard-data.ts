import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-client.js';
import { globEscape, scanKeys } from '../redis/scan-keys.js';
import { type KeyLayout, type QueueShard, shardIndexOfHash } from './key-layout.js';
import { eventId, parseDedupeMarker, QUEUE_NAMES } from './redis-keys.js';

/** What a reshard moved, by kind. */
export interface MovedCounts {
  conversations: number;
  markers: number;
  runs: number;
  timers: number;
}

/** Copies a key (value and TTL) to another name, possibly in another slot, then deletes the source. */
async function moveKey(redis: RedisClient, from: string, to: string): Promise<boolean> {
  if (from === to) return false;
  const [dump, ttl] = await Promise.all([redis.dumpBuffer(from), redis.pttl(from)]);
  if (dump === null) return false;
  await redis.restore(to, Math.max(ttl, 0), dump, 'REPLACE');
  await redis.del(from);
  return true;
}

async function copyKey(redis: RedisClient, from: string, to: string): Promise<void> {
  const [dump, ttl] = await Promise.all([redis.dumpBuffer(from), redis.pttl(from)]);
  if (dump !== null) await redis.restore(to, Math.max(ttl, 0), dump, 'REPLACE');
}

function shardForHash(to: KeyLayout, hash: string): QueueShard {
  return to.all[shardIndexOfHash(hash, to.shards)] as QueueShard;
}

/** The conversation of each dead letter's event (by event id): their run state follows it. */
async function readRunOwners(redis: RedisClient, from: KeyLayout): Promise<Map<string, string>> {
  const runOwners = new Map<string, string>();
  for (const id of await redis.zrange(from.global.deadIndex, 0, -1)) {
    const raw = await redis.get(from.global.dead(id));
    if (raw === null) continue;
    const entry = JSON.parse(raw) as { eventKey?: unknown; conversationId?: unknown };
    if (typeof entry.eventKey === 'string' && typeof entry.conversationId === 'string') {
      runOwners.set(eventId(entry.eventKey), entry.conversationId);
    }
  }
  return runOwners;
}

/**
 * Every conversation's state (facts, once-marks, cooldowns, timer registrations), to its new shard;
 * a business's conversations (`<root>:b:<id>:conv:<hash>`) keep their business.
 */
async function moveConversations(redis: RedisClient, shard: QueueShard, to: KeyLayout): Promise<number> {
  const root = shard.keys.prefix;
  let moved = 0;
  const keys = [
    ...(await scanKeys(redis, `${globEscape(root)}:conv:*`)),
    ...(await scanKeys(redis, `${globEscape(root)}:b:*:conv:*`)),
  ];
  for (const key of keys) {
    const at = key.lastIndexOf(':conv:');
    const scope = key.slice(root.length, at);
    const hash = key.slice(at + ':conv:'.length);
    if (await moveKey(redis, key, `${shardForHash(to, hash).keys.prefix}${scope}:conv:${hash}`)) {
      moved += 1;
    }
  }
  return moved;
}

async function moveDedupeMarkers(redis: RedisClient, shard: QueueShard, to: KeyLayout): Promise<number> {
  const root = shard.keys.prefix;
  let moved = 0;
  for (const key of await scanKeys(redis, `${globEscape(root)}:dedupe:*`)) {
    const id = key.slice(`${root}:dedupe:`.length);
    const value = await redis.get(key);
    if (value === null) continue;
    const { conversation } = parseDedupeMarker(value);
    // A marker written before markers named their conversation: keep it in every new shard.
    const targets = conversation === null ? to.all : [shardForHash(to, conversation)];
    for (const target of targets) await copyKey(redis, key, `${target.keys.prefix}:dedupe:${id}`);
    if (!targets.some((t) => `${t.keys.prefix}:dedupe:${id}` === key)) await redis.del(key);
    moved += 1;
  }
  return moved;
}

/** Pending timers: re-added, same id and due time, to the new shard's timers queue. */
async function moveTimers(redis: RedisClient, shard: QueueShard, to: KeyLayout): Promise<number> {
  let moved = 0;
  const oldTimers = new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: shard.queuePrefix });
  try {
    for (const job of await oldTimers.getJobs(['delayed'])) {
      const conversationId = String((job.data as { conversationId?: unknown }).conversationId ?? '');
      const target = to.shardOf(conversationId);
      if (target.queuePrefix === shard.queuePrefix) continue;
      const timerId = String((job.data as { timerId?: unknown }).timerId ?? '');
      await moveKey(redis, shard.keys.run(timerId), target.keys.run(timerId));
      const newTimers = new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: target.queuePrefix });
      try {
        const delay = Math.max(0, job.timestamp + (job.opts.delay ?? 0) - Date.now());
        await newTimers.add(job.name, job.data, {
          ...job.opts,
          delay,
          ...(job.id ? { jobId: job.id } : {}),
        });
      } finally {
        await newTimers.close();
      }
      await job.remove();
      moved += 1;
    }
  } finally {
    await oldTimers.close();
  }
  return moved;
}

/**
 * Run state left behind: dead letters keep theirs for a replay (the entry names the event and its
 * conversation); anything else is kept in every new shard (it expires).
 */
async function moveRunState(
  redis: RedisClient,
  shard: QueueShard,
  to: KeyLayout,
  runOwners: ReadonlyMap<string, string>,
): Promise<number> {
  const root = shard.keys.prefix;
  let moved = 0;
  for (const key of await scanKeys(redis, `${globEscape(root)}:run:*`)) {
    const id = key.slice(`${root}:run:`.length);
    const conversationId = runOwners.get(id);
    const targets = conversationId === undefined ? to.all : [to.shardOf(conversationId)];
    for (const target of targets) await copyKey(redis, key, `${target.keys.prefix}:run:${id}`);
    if (!targets.some((t) => `${t.keys.prefix}:run:${id}` === key)) await redis.del(key);
    moved += 1;
  }
  return moved;
}

/**
 * Arrival numbers only compare events of one conversation; starting every new shard above the
 * highest old number keeps "later" meaning later for a conversation that moved.
 */
async function raiseArrivals(redis: RedisClient, to: KeyLayout, highestArrival: number): Promise<void> {
  for (const shard of to.all) {
    const current = Number((await redis.get(shard.keys.arrival)) ?? '0');
    if (current < highestArrival) await redis.set(shard.keys.arrival, String(highestArrival));
  }
}

/** Keys of no conversation move only when the global root changes (untagged -> tagged). */
async function moveGlobalKeys(redis: RedisClient, from: KeyLayout, to: KeyLayout): Promise<void> {
  if (from.global.prefix === to.global.prefix) return;
  for (const key of await scanKeys(redis, `${globEscape(from.global.prefix)}:*`)) {
    const rest = key.slice(from.global.prefix.length);
    if (/^:(conv|dedupe|run|order|arrival)\b/.test(rest) || rest === ':layout') continue;
    await moveKey(redis, key, `${to.global.prefix}${rest}`);
  }
}

/**
 * The move step of a reshard (queue/reshard.ts): every conversation's state, its dedupe markers,
 * kept run state and pending timers go to the conversation's shard under `to`, shard by shard of
 * `from`. Each move copies, then deletes the source, so running it again after an interruption
 * finishes the job.
 */
export async function moveShardData(
  redis: RedisClient,
  from: KeyLayout,
  to: KeyLayout,
): Promise<MovedCounts> {
  const moved: MovedCounts = { conversations: 0, markers: 0, runs: 0, timers: 0 };
  const runOwners = await readRunOwners(redis, from);
  let highestArrival = 0;
  for (const shard of from.all) {
    const arrival = Number((await redis.get(shard.keys.arrival)) ?? '0');
    highestArrival = Math.max(highestArrival, arrival);
    moved.conversations += await moveConversations(redis, shard, to);
    moved.markers += await moveDedupeMarkers(redis, shard, to);
    moved.timers += await moveTimers(redis, shard, to);
    moved.runs += await moveRunState(redis, shard, to, runOwners);
  }
  await raiseArrivals(redis, to, highestArrival);
  await moveGlobalKeys(redis, from, to);
  return moved;
}
