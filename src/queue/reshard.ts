import { Queue } from 'bullmq';
import { Cluster, type Redis } from 'ioredis';
import { ConvoBridgeError } from '../base/errors.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createKeyLayout, type KeyLayout, type QueueShard, shardIndexOfHash } from './key-layout.js';
import { layoutRecordKey, readStoredLayout, type StoredLayout } from './layout-record.js';
import { eventId, parseDedupeMarker, QUEUE_NAMES } from './redis-keys.js';

/**
 * Changing `redis.shards` (or moving a single-Redis layout to tagged keys) by draining first:
 * conversations are assigned to shards by hash, so changing the count moves most of them. Moving
 * a conversation while it has events waiting could run them out of order, so the bridge must be
 * stopped and its queues empty; then every conversation's state (facts, once-marks, cooldowns,
 * timer registrations), its dedupe markers, kept run state and pending timers are moved to the
 * conversation's new shard, and the new layout is recorded (queue/layout-record.ts).
 *
 * Each step is idempotent (copy, then delete the source), and the record says "resharding" until
 * the end, so a reshard that was interrupted is resumed by running it again, and no bridge starts
 * on a half-moved Redis.
 */

export class ReshardError extends ConvoBridgeError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'RESHARD_REFUSED', cause: options.cause });
    this.name = 'ReshardError';
  }
}

export interface ReshardReport {
  from: Pick<StoredLayout, 'shards' | 'tagged'>;
  to: Pick<StoredLayout, 'shards' | 'tagged'>;
  conversations: number;
  markers: number;
  runs: number;
  timers: number;
  /** Nothing to do: the Redis already holds the wanted layout. */
  unchanged: boolean;
}

export interface ReshardOptions {
  redis: RedisClient;
  prefix: string;
  /** The layout wanted (from the new config). */
  to: KeyLayout;
  /** Progress lines for the operator. */
  say?: (line: string) => void;
}

/** Every primary's connection (one for a single Redis), for SCAN. */
function primaries(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

async function scanKeys(redis: RedisClient, match: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return [...new Set(found)];
}

/** SCAN's MATCH treats `{`, `}`? no; but `[`, `]`, `*`, `?` and `\` are special: escape them. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
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

/**
 * Checks nothing runs and nothing waits under the old layout. Returns what is in the way, in
 * words (empty when the reshard may go on).
 */
export async function reshardObstacles(redis: RedisClient, from: KeyLayout): Promise<string[]> {
  const problems: string[] = [];
  for (const shard of from.all) {
    const events = new Queue(QUEUE_NAMES.events, { connection: redis, prefix: shard.queuePrefix });
    const timers = new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: shard.queuePrefix });
    try {
      const where = from.shards > 1 ? ` in shard ${shard.index}` : '';
      const workers = (await events.getWorkersCount()) + (await timers.getWorkersCount());
      if (workers > 0) problems.push(`${workers} worker connection(s)${where} are running`);
      const counts = await events.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      const pending = Object.values(counts).reduce((a, b) => a + b, 0);
      if (pending > 0) problems.push(`${pending} event batch job(s)${where} are not finished`);
      const timerCounts = await timers.getJobCounts('waiting', 'active', 'prioritized');
      const firing = Object.values(timerCounts).reduce((a, b) => a + b, 0);
      if (firing > 0) problems.push(`${firing} timer(s)${where} are due and not finished`);
      const orders = await scanKeys(redis, `${globEscape(shard.keys.prefix)}:order:*`);
      const waiting = orders.filter((key) => !key.includes(':ghost:'));
      if (waiting.length > 0) problems.push(`${waiting.length} conversation(s)${where} have events waiting`);
    } finally {
      await Promise.all([events.close(), timers.close()]);
    }
  }
  if (await redis.exists(from.global.health)) {
    problems.push('a receiver answered a readiness probe in the last 10 s');
  }
  return problems;
}

function shardForHash(to: KeyLayout, hash: string): QueueShard {
  return to.all[shardIndexOfHash(hash, to.shards)] as QueueShard;
}

export async function reshard(options: ReshardOptions): Promise<ReshardReport> {
  const { redis, prefix, to } = options;
  const say = options.say ?? (() => {});
  const stored = await readStoredLayout(redis, prefix);
  const fromStored = stored ?? { version: 1 as const, shards: 1, tagged: false };
  const wanted = { version: 1 as const, shards: to.shards, tagged: to.tagged };
  const report: ReshardReport = {
    from: { shards: fromStored.shards, tagged: fromStored.tagged },
    to: { shards: to.shards, tagged: to.tagged },
    conversations: 0,
    markers: 0,
    runs: 0,
    timers: 0,
    unchanged: false,
  };
  const from = createKeyLayout({ prefix, shards: fromStored.shards, tagged: fromStored.tagged });
  const resuming = stored?.resharding;
  if (resuming && (resuming.to !== wanted.shards || resuming.tagged !== wanted.tagged)) {
    throw new ReshardError(
      `an interrupted reshard to ${resuming.to} shard(s) must be finished first: run \`convo-bridge reshard --to ${resuming.to}\` with that config`,
    );
  }
  // No record and no data of the old single-Redis layout (readStoredLayout finds that): nothing to move.
  if (
    stored === null ||
    (!resuming && fromStored.shards === wanted.shards && fromStored.tagged === wanted.tagged)
  ) {
    report.unchanged = true;
    if (stored === null) await redis.set(layoutRecordKey(prefix, to.tagged), JSON.stringify(wanted), 'NX');
    return report;
  }
  const obstacles = await reshardObstacles(redis, from);
  if (obstacles.length > 0) {
    throw new ReshardError(
      `cannot reshard prefix "${prefix}" yet: ${obstacles.join('; ')}. Keep the bridge running with its current config (redis.shards: ${fromStored.shards}) until the queues are empty, then stop every receiver and worker and run this again`,
      { code: 'RESHARD_NOT_DRAINED' },
    );
  }
  // From here on no bridge may start on this prefix (claimLayout refuses) until the end.
  const marked: StoredLayout = {
    ...fromStored,
    resharding: {
      to: wanted.shards,
      tagged: wanted.tagged,
      since: resuming?.since ?? new Date().toISOString(),
    },
  };
  await redis.set(layoutRecordKey(prefix, fromStored.tagged), JSON.stringify(marked));
  say(`moving prefix "${prefix}" from ${from.describe()} to ${to.describe()}`);

  const runOwners = new Map<string, string>();
  for (const id of await redis.zrange(from.global.deadIndex, 0, -1)) {
    const raw = await redis.get(from.global.dead(id));
    if (raw === null) continue;
    const entry = JSON.parse(raw) as { eventKey?: unknown; conversationId?: unknown };
    if (typeof entry.eventKey === 'string' && typeof entry.conversationId === 'string') {
      runOwners.set(eventId(entry.eventKey), entry.conversationId);
    }
  }
  let highestArrival = 0;
  for (const shard of from.all) {
    const root = shard.keys.prefix;
    const arrival = Number((await redis.get(shard.keys.arrival)) ?? '0');
    highestArrival = Math.max(highestArrival, arrival);

    for (const key of await scanKeys(redis, `${globEscape(root)}:conv:*`)) {
      const hash = key.slice(`${root}:conv:`.length);
      if (await moveKey(redis, key, `${shardForHash(to, hash).keys.prefix}:conv:${hash}`)) {
        report.conversations += 1;
      }
    }
    for (const key of await scanKeys(redis, `${globEscape(root)}:dedupe:*`)) {
      const id = key.slice(`${root}:dedupe:`.length);
      const value = await redis.get(key);
      if (value === null) continue;
      const { conversation } = parseDedupeMarker(value);
      // A marker written before markers named their conversation: keep it in every new shard.
      const targets = conversation === null ? to.all : [shardForHash(to, conversation)];
      for (const target of targets) await copyKey(redis, key, `${target.keys.prefix}:dedupe:${id}`);
      if (!targets.some((t) => `${t.keys.prefix}:dedupe:${id}` === key)) await redis.del(key);
      report.markers += 1;
    }
    // Pending timers: re-added, same id and due time, to the new shard's timers queue.
    const oldTimers = new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: shard.queuePrefix });
    try {
      for (const job of await oldTimers.getJobs(['delayed'])) {
        const conversationId = String((job.data as { conversationId?: unknown }).conversationId ?? '');
        const target = to.shardOf(conversationId);
        if (target.queuePrefix === shard.queuePrefix) continue;
        const runKey = shard.keys.run(String((job.data as { timerId?: unknown }).timerId ?? ''));
        await moveKey(
          redis,
          runKey,
          target.keys.run(String((job.data as { timerId?: unknown }).timerId ?? '')),
        );
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
        report.timers += 1;
      }
    } finally {
      await oldTimers.close();
    }
    // Run state left behind: dead letters keep theirs for a replay (the entry names the event
    // and its conversation); anything else is kept in every new shard (it expires).
    for (const key of await scanKeys(redis, `${globEscape(root)}:run:*`)) {
      const id = key.slice(`${root}:run:`.length);
      const conversationId = runOwners.get(id);
      const targets = conversationId === undefined ? to.all : [to.shardOf(conversationId)];
      for (const target of targets) await copyKey(redis, key, `${target.keys.prefix}:run:${id}`);
      if (!targets.some((t) => `${t.keys.prefix}:run:${id}` === key)) await redis.del(key);
      report.runs += 1;
    }
  }
  // Arrival numbers only compare events of one conversation; starting every new shard above the
  // highest old number keeps "later" meaning later for a conversation that moved.
  for (const shard of to.all) {
    const current = Number((await redis.get(shard.keys.arrival)) ?? '0');
    if (current < highestArrival) await redis.set(shard.keys.arrival, String(highestArrival));
  }
  // Keys of no conversation move only when the global root changes (untagged -> tagged).
  if (from.global.prefix !== to.global.prefix) {
    for (const key of await scanKeys(redis, `${globEscape(from.global.prefix)}:*`)) {
      const rest = key.slice(from.global.prefix.length);
      if (/^:(conv|dedupe|run|order|arrival)\b/.test(rest) || rest === ':layout') continue;
      await moveKey(redis, key, `${to.global.prefix}${rest}`);
    }
  }
  await redis.set(layoutRecordKey(prefix, to.tagged), JSON.stringify(wanted));
  if (layoutRecordKey(prefix, to.tagged) !== layoutRecordKey(prefix, fromStored.tagged)) {
    await redis.del(layoutRecordKey(prefix, fromStored.tagged));
  }
  say(
    `done: ${report.conversations} conversation(s), ${report.markers} dedupe marker(s), ${report.timers} timer(s), ${report.runs} kept run state(s) moved`,
  );
  return report;
}
