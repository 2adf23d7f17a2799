import type { RedisTopology } from '../config/redis-topology.js';
import { type BusinessNaming, SINGLE_BUSINESS_NAMING } from '../events/business-naming.js';
import { CLUSTER_SLOTS, keySlot } from '../redis/key-slot.js';
import { type BridgeKeys, bridgeKeys, conversationHash } from './redis-keys.js';

/** Most queue shards one bridge may have (each is a pair of BullMQ queues and a worker per process). */
export const MAX_SHARDS = 128;

export { CLUSTER_SLOTS, keySlot };

export interface KeyLayoutOptions {
  prefix: string;
  /** Queue shards (1 to MAX_SHARDS). */
  shards: number;
  /**
   * Put every shard's keys under its own `{hash tag}` (and the keys of no conversation under
   * another). Needed on Redis Cluster and with more than one shard; one untagged shard is the
   * layout of earlier versions, kept so that an existing single-Redis install upgrades in place.
   */
  tagged: boolean;
}

export interface QueueShard {
  readonly index: number;
  /** BullMQ's prefix of this shard's queues (`events`, `timers`), also the root of its bridge keys. */
  readonly queuePrefix: string;
  readonly keys: BridgeKeys;
}

export interface KeyLayout extends KeyLayoutOptions {
  /** The naming whose keys `all` and `global` hold (events/business-naming.ts). */
  readonly naming: BusinessNaming;
  /**
   * The `business` the jobs of this naming carry, as the readers of job data in privacy/ compare
   * it: null for the single-business naming, whose jobs carry none.
   */
  readonly business: string | null;
  readonly all: readonly QueueShard[];
  /** Keys that belong to no conversation (dead letters, quarantine, recorded events, alarms). */
  readonly global: BridgeKeys;
  /** The shard a conversation lives in, for ever (until a `reshard`). */
  shardOf(conversationId: string | null | undefined): QueueShard;
  /** In words, for logs and `validate`. */
  describe(): string;
  /** The same shards and queues with the keys of one business's naming. Made once per naming and kept. */
  forNaming(naming: BusinessNaming): KeyLayout;
}

/**
 * The hash tag of shard `index` of `count`: `<prefix>:<index>`, with a suffix when needed so that
 * its slot falls in the index-th equal part of the slot space. A cluster whose slots are split
 * evenly over its primaries (what `redis-cli --cluster create` does) then holds the same number of
 * shards on each primary, instead of whatever CRC16 happens to give for `cb:0`, `cb:1`...
 */
export function shardTag(prefix: string, index: number, count: number): string {
  const low = Math.floor((index * CLUSTER_SLOTS) / count);
  const high = Math.floor(((index + 1) * CLUSTER_SLOTS) / count);
  const base = `${prefix}:${index}`;
  for (let attempt = 0; attempt < 1_000_000; attempt++) {
    const tag = attempt === 0 ? base : `${base}.${attempt}`;
    const slot = keySlot(tag); // the tag has no braces: the slot of the tag itself
    if (slot >= low && slot < high) return tag;
  }
  return base; // unreachable for count <= MAX_SHARDS: each part spans >= 128 slots
}

/** A stable shard number for a conversation: its id's SHA-256 (as in key names) modulo the count. */
export function shardIndexOf(conversationId: string, count: number): number {
  if (count <= 1) return 0;
  return Number.parseInt(conversationHash(conversationId).slice(0, 8), 16) % count;
}

/** Same, from the hash part of a conversation key (`...:conv:<hash>`), for `reshard`. */
export function shardIndexOfHash(hash: string, count: number): number {
  if (count <= 1) return 0;
  return Number.parseInt(hash.slice(0, 8), 16) % count;
}

export function createKeyLayout(options: KeyLayoutOptions): KeyLayout {
  const { prefix, shards, tagged } = options;
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}, got ${shards}`);
  }
  if (!tagged && shards > 1) throw new RangeError('more than one shard needs tagged keys');
  const globalPrefix = tagged ? `{${prefix}}` : prefix;
  const queuePrefixes: string[] = [];
  for (let index = 0; index < shards; index++) {
    queuePrefixes.push(tagged ? `{${shardTag(prefix, index, shards)}}` : prefix);
  }
  const made = new Map<string, KeyLayout>();
  const forNaming = (naming: BusinessNaming): KeyLayout => {
    let layout = made.get(naming.tag);
    if (layout === undefined) {
      layout = namingLayout(options, globalPrefix, queuePrefixes, naming, forNaming);
      made.set(naming.tag, layout);
    }
    return layout;
  };
  return forNaming(SINGLE_BUSINESS_NAMING);
}

/** A layout's shards with one naming's keys (the queues' prefixes are the same for every business). */
function namingLayout(
  options: KeyLayoutOptions,
  globalPrefix: string,
  queuePrefixes: readonly string[],
  naming: BusinessNaming,
  forNaming: (naming: BusinessNaming) => KeyLayout,
): KeyLayout {
  const { prefix, shards, tagged } = options;
  const all: QueueShard[] = queuePrefixes.map((queuePrefix, index) => ({
    index,
    queuePrefix,
    keys: bridgeKeys(queuePrefix, globalPrefix, naming),
  }));
  const first = all[0] as QueueShard;
  return {
    prefix,
    shards,
    tagged,
    naming,
    business: naming.tag === '' ? null : naming.tag,
    all,
    global: first.keys,
    shardOf(conversationId) {
      return shards === 1 ? first : (all[shardIndexOf(conversationId ?? '', shards)] as QueueShard);
    },
    describe() {
      if (!tagged) return `1 queue shard, keys under "${prefix}:" (single Redis layout)`;
      return `${shards} queue shard(s) under hash tags ${all
        .slice(0, 3)
        .map((s) => s.queuePrefix)
        .join(', ')}${shards > 3 ? ', ...' : ''}; keys of no conversation under "${globalPrefix}:"`;
    },
    forNaming,
  };
}

/**
 * The layout a config asks for: tagged keys on a cluster or with more than one shard; otherwise
 * the untagged single-Redis layout of earlier versions (an existing install keeps its data).
 */
export function layoutFor(redis: { topology: RedisTopology; prefix: string; shards: number }): KeyLayout {
  return createKeyLayout({
    prefix: redis.prefix,
    shards: redis.shards,
    tagged: redis.shards > 1 || redis.topology.kind === 'cluster',
  });
}
