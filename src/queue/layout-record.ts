import { z } from 'zod';
import { ConvoBridgeError } from '../base/errors.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createKeyLayout, type KeyLayout } from './key-layout.js';

/**
 * The key layout a Redis holds, written by the first bridge that used it. A bridge whose config
 * asks for another shard count (or moved from one Redis to a cluster layout) would put a
 * conversation's next events in another shard than its waiting ones, breaking order and
 * exactly-once: it refuses to start, and `convo-bridge reshard` moves the data instead.
 */
const StoredLayoutSchema = z.object({
  version: z.literal(1),
  shards: z.number().int().min(1),
  tagged: z.boolean(),
  /** Set while `reshard` moves data: nothing may run meanwhile. */
  resharding: z.object({ to: z.number().int().min(1), tagged: z.boolean(), since: z.string() }).optional(),
});
export type StoredLayout = z.infer<typeof StoredLayoutSchema>;

/** Where the record lives: under the layout's global root (`{cb}:` tagged, `cb:` untagged). */
export function layoutRecordKey(prefix: string, tagged: boolean): string {
  return tagged ? `{${prefix}}:bridge:layout` : `${prefix}:bridge:layout`;
}

export class LayoutMismatchError extends ConvoBridgeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: 'REDIS_LAYOUT_MISMATCH', ...options });
    this.name = 'LayoutMismatchError';
  }
}

function parseRecord(raw: string, key: string): StoredLayout {
  try {
    return StoredLayoutSchema.parse(JSON.parse(raw));
  } catch (error) {
    throw new LayoutMismatchError(
      `the layout record ${key} in Redis is not one convo-bridge wrote (${raw.slice(0, 80)}): delete it only if no bridge data is under this prefix`,
      { cause: error },
    );
  }
}

/**
 * The layout stored in this Redis for `prefix`: its record, or, for data of a version before
 * records (keys under the untagged prefix), one untagged shard; null when there is no data yet.
 */
export async function readStoredLayout(redis: RedisClient, prefix: string): Promise<StoredLayout | null> {
  for (const tagged of [true, false]) {
    const key = layoutRecordKey(prefix, tagged);
    const raw = await redis.get(key);
    if (raw !== null) return parseRecord(raw, key);
  }
  const legacy = await redis.exists(`${prefix}:bridge:arrival`, `${prefix}:events:id`).catch(async () => {
    // A cluster refuses a multi-key EXISTS across slots: ask one key at a time.
    return (await redis.exists(`${prefix}:bridge:arrival`)) + (await redis.exists(`${prefix}:events:id`));
  });
  return legacy > 0 ? { version: 1, shards: 1, tagged: false } : null;
}

export function describeStored(stored: Pick<StoredLayout, 'shards' | 'tagged'>): string {
  return stored.tagged ? `${stored.shards} tagged shard(s)` : '1 untagged shard (the single-Redis layout)';
}

/**
 * Checks that the Redis holds the layout the config asks for, and records it when the Redis has
 * no bridge data yet. Throws LayoutMismatchError saying what to run otherwise.
 */
export async function claimLayout(redis: RedisClient, layout: KeyLayout): Promise<void> {
  const stored = await readStoredLayout(redis, layout.prefix);
  const wanted = { version: 1 as const, shards: layout.shards, tagged: layout.tagged };
  if (stored === null) {
    await redis.set(layoutRecordKey(layout.prefix, layout.tagged), JSON.stringify(wanted), 'NX');
    return claimLayoutAgain(redis, layout);
  }
  if (stored.resharding) {
    throw new LayoutMismatchError(
      `a reshard of prefix "${layout.prefix}" to ${stored.resharding.to} shard(s) started at ${stored.resharding.since} and has not finished: run \`convo-bridge reshard --to ${stored.resharding.to}\` again (it resumes), then start the bridge`,
    );
  }
  if (stored.shards !== wanted.shards || stored.tagged !== wanted.tagged) {
    throw new LayoutMismatchError(
      `this Redis holds prefix "${layout.prefix}" as ${describeStored(stored)}, but the config asks for ${describeStored(wanted)}: events of one conversation would land in two shards. Either set redis.shards back to ${stored.shards}${stored.tagged === wanted.tagged ? '' : ' (and the same Redis topology)'}, or stop every bridge process and run \`convo-bridge reshard --to ${wanted.shards}\` with the new config (it waits for the queues to drain and moves every conversation's state)`,
    );
  }
}

/** After a SET NX: another process may have recorded a different layout at the same moment. */
async function claimLayoutAgain(redis: RedisClient, layout: KeyLayout): Promise<void> {
  const stored = await readStoredLayout(redis, layout.prefix);
  if (stored === null || stored.shards !== layout.shards || stored.tagged !== layout.tagged) {
    throw new LayoutMismatchError(
      `another bridge recorded a different layout for prefix "${layout.prefix}" (${stored ? describeStored(stored) : 'none'}) at the same time: give every process the same redis.shards`,
    );
  }
}

/** The layout of a Redis as recorded (operator commands without a config). */
export async function storedKeyLayout(redis: RedisClient, prefix: string): Promise<KeyLayout> {
  const stored = await readStoredLayout(redis, prefix);
  return createKeyLayout({ prefix, shards: stored?.shards ?? 1, tagged: stored?.tagged ?? false });
}
