import { ConvoBridgeError } from '../base/errors.js';
import type { RedisClient } from '../redis/redis-client.js';
import { globEscape, scanKeys } from '../redis/scan-keys.js';
import { createKeyLayout, type KeyLayout } from './key-layout.js';
import { layoutRecordKey, readStoredLayout, type StoredLayout } from './layout-record.js';
import { type MovedCounts, moveShardData } from './move-shard-data.js';
import { readOnlyQueue } from './read-only-queue.js';
import { QUEUE_NAMES } from './redis-keys.js';

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

export interface ReshardReport extends MovedCounts {
  from: Pick<StoredLayout, 'shards' | 'tagged'>;
  to: Pick<StoredLayout, 'shards' | 'tagged'>;
  /** Nothing moved: the Redis already holds the wanted layout, or held no data (see `recorded`). */
  unchanged: boolean;
  /** The Redis held no data under the prefix and the wanted layout's record was written. */
  recorded: boolean;
}

export interface ReshardOptions {
  redis: RedisClient;
  prefix: string;
  /** The layout wanted (from the new config). */
  to: KeyLayout;
  /** Progress lines for the operator. */
  say?: (line: string) => void;
}

/**
 * Checks nothing runs and nothing waits under the old layout. Returns what is in the way, in
 * words (empty when the reshard may go on).
 */
export async function reshardObstacles(redis: RedisClient, from: KeyLayout): Promise<string[]> {
  const problems: string[] = [];
  for (const shard of from.all) {
    const events = readOnlyQueue(QUEUE_NAMES.events, redis, shard.queuePrefix);
    const timers = readOnlyQueue(QUEUE_NAMES.timers, redis, shard.queuePrefix);
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

/** Where a reshard starts and where it goes. */
interface ReshardPlan {
  readonly prefix: string;
  /** The stored record (or the legacy layout readStoredLayout infers); null when there is no data. */
  readonly stored: StoredLayout | null;
  /** The layout the data is in now. */
  readonly fromStored: StoredLayout;
  readonly from: KeyLayout;
  readonly to: KeyLayout;
  /** The record written at the end. */
  readonly wanted: StoredLayout;
  /** Set when an earlier reshard was interrupted. */
  readonly resuming: StoredLayout['resharding'];
}

/** Reads what the Redis holds; refuses to start another reshard over an interrupted one. */
async function planReshard(redis: RedisClient, prefix: string, to: KeyLayout): Promise<ReshardPlan> {
  const stored = await readStoredLayout(redis, prefix);
  const fromStored: StoredLayout = stored ?? { version: 1 as const, shards: 1, tagged: false };
  const wanted: StoredLayout = { version: 1 as const, shards: to.shards, tagged: to.tagged };
  const from = createKeyLayout({ prefix, shards: fromStored.shards, tagged: fromStored.tagged });
  const resuming = stored?.resharding;
  if (resuming && (resuming.to !== wanted.shards || resuming.tagged !== wanted.tagged)) {
    throw new ReshardError(
      `an interrupted reshard to ${resuming.to} shard(s) must be finished first: run \`convo-bridge reshard --to ${resuming.to}\` with that config`,
    );
  }
  return { prefix, stored, fromStored, from, to, wanted, resuming };
}

/** Refuses while anything runs or waits under the old layout. */
async function checkDrained(redis: RedisClient, plan: ReshardPlan): Promise<void> {
  const obstacles = await reshardObstacles(redis, plan.from);
  if (obstacles.length > 0) {
    throw new ReshardError(
      `cannot reshard prefix "${plan.prefix}" yet: ${obstacles.join('; ')}. Keep the bridge running with its current config (redis.shards: ${plan.fromStored.shards}) until the queues are empty, then stop every receiver and worker and run this again`,
      { code: 'RESHARD_NOT_DRAINED' },
    );
  }
}

/** From here on no bridge may start on this prefix (claimLayout refuses) until recordLayout. */
async function markResharding(redis: RedisClient, plan: ReshardPlan): Promise<void> {
  const marked: StoredLayout = {
    ...plan.fromStored,
    resharding: {
      to: plan.wanted.shards,
      tagged: plan.wanted.tagged,
      since: plan.resuming?.since ?? new Date().toISOString(),
    },
  };
  await redis.set(layoutRecordKey(plan.prefix, plan.fromStored.tagged), JSON.stringify(marked));
}

/** The new layout's record replaces the old one (which may live under another root). */
async function recordLayout(redis: RedisClient, plan: ReshardPlan): Promise<void> {
  const { prefix, to, fromStored, wanted } = plan;
  await redis.set(layoutRecordKey(prefix, to.tagged), JSON.stringify(wanted));
  if (layoutRecordKey(prefix, to.tagged) !== layoutRecordKey(prefix, fromStored.tagged)) {
    await redis.del(layoutRecordKey(prefix, fromStored.tagged));
  }
}

function reportOf(
  plan: ReshardPlan,
  moved: MovedCounts,
  unchanged: boolean,
  recorded = false,
): ReshardReport {
  return {
    from: { shards: plan.fromStored.shards, tagged: plan.fromStored.tagged },
    to: { shards: plan.to.shards, tagged: plan.to.tagged },
    ...moved,
    unchanged,
    recorded,
  };
}

/** Plan, check the queues are drained, mark the record, move the data, record the new layout. */
export async function reshard(options: ReshardOptions): Promise<ReshardReport> {
  const { redis, prefix, to } = options;
  const say = options.say ?? (() => {});
  const plan = await planReshard(redis, prefix, to);
  const { stored, fromStored, wanted, resuming } = plan;
  // No record and no data of the old single-Redis layout (readStoredLayout finds that): nothing to move.
  if (
    stored === null ||
    (!resuming && fromStored.shards === wanted.shards && fromStored.tagged === wanted.tagged)
  ) {
    // The record makes a bridge with another shard count refuse this Redis from now on.
    const recorded =
      stored === null &&
      (await redis.set(layoutRecordKey(prefix, to.tagged), JSON.stringify(wanted), 'NX')) === 'OK';
    return reportOf(plan, { conversations: 0, markers: 0, runs: 0, timers: 0 }, true, recorded);
  }
  await checkDrained(redis, plan);
  await markResharding(redis, plan);
  say(`moving prefix "${prefix}" from ${plan.from.describe()} to ${to.describe()}`);
  const moved = await moveShardData(redis, plan.from, to);
  await recordLayout(redis, plan);
  say(
    `done: ${moved.conversations} conversation(s), ${moved.markers} dedupe marker(s), ${moved.timers} timer(s), ${moved.runs} kept run state(s) moved`,
  );
  return reportOf(plan, moved, false);
}
