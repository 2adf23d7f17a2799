import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { businessNaming, SINGLE_BUSINESS_NAMING } from '../../../src/events/business-naming.js';
import {
  CLUSTER_SLOTS,
  createKeyLayout,
  keySlot,
  shardIndexOf,
  shardIndexOfHash,
  shardTag,
} from '../../../src/queue/key-layout.js';
import { conversationHash } from '../../../src/queue/redis-keys.js';

// ioredis's own slot function (its dependency), as an independent reading of the cluster spec.
const require = createRequire(import.meta.url);
const clusterKeySlot = require('cluster-key-slot') as (key: string) => number;

describe('keySlot', () => {
  it('matches the values of the Redis Cluster specification', () => {
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('{foo}.bar')).toBe(12182);
    // An empty tag is no tag: the whole key is hashed.
    expect(keySlot('{}foo')).toBe(clusterKeySlot('{}foo'));
  });

  it('agrees with ioredis on many keys, tagged and not, ASCII and not', () => {
    const keys = [];
    for (let i = 0; i < 2_000; i++)
      keys.push(`cb:bridge:conv:${i.toString(36)}`, `{cb:${i}}:events:wait`, `é${i}{x}`);
    for (const key of keys) expect(keySlot(key), key).toBe(clusterKeySlot(key));
  });
});

describe('createKeyLayout', () => {
  it('keeps the single-Redis layout of earlier versions for one untagged shard', () => {
    const layout = createKeyLayout({ prefix: 'cb', shards: 1, tagged: false });
    expect(layout.all).toHaveLength(1);
    expect(layout.shardOf('c1').queuePrefix).toBe('cb');
    expect(layout.global.deadIndex).toBe('cb:bridge:dead:index');
    expect(layout.shardOf('c1').keys.conversation('c1')).toBe(`cb:bridge:conv:${conversationHash('c1')}`);
  });

  it('puts every key a shard script touches in one slot, and global keys in another tag', () => {
    const layout = createKeyLayout({ prefix: 'cb', shards: 6, tagged: true });
    for (const conversation of ['a', 'b', 'conv-42', '']) {
      const shard = layout.shardOf(conversation);
      const k = shard.keys;
      const slots = new Set(
        [
          k.order(conversation),
          k.conversation(conversation),
          k.run('event-1'),
          k.dedupe('event-1'),
          k.arrival,
          `${shard.queuePrefix}:events:wait`,
          `${shard.queuePrefix}:events:b-1`,
          `${shard.queuePrefix}:timers:delayed`,
        ].map(keySlot),
      );
      expect(slots.size).toBe(1);
    }
    const g = layout.global;
    const globalSlots = new Set(
      [g.deadIndex, g.dead('x'), g.quarantine, g.quarantineEntries, g.recordedIndex, g.recordedSeq].map(
        keySlot,
      ),
    );
    expect(globalSlots.size).toBe(1);
    expect(g.deadIndex.startsWith('{cb}:')).toBe(true);
  });

  it('spreads the shards evenly over the slot space, so evenly split primaries get equal shares', () => {
    for (const count of [2, 3, 6, 12, 128]) {
      const layout = createKeyLayout({ prefix: 'cb', shards: count, tagged: true });
      layout.all.forEach((shard, index) => {
        const slot = keySlot(`${shard.queuePrefix}:x`);
        expect(slot).toBeGreaterThanOrEqual(Math.floor((index * CLUSTER_SLOTS) / count));
        expect(slot).toBeLessThan(Math.floor(((index + 1) * CLUSTER_SLOTS) / count));
      });
      expect(new Set(layout.all.map((s) => s.queuePrefix)).size).toBe(count);
    }
  });

  it('names the same tags and shards in every process and every version (stored data depends on them)', () => {
    // Pinned values: a change here strands every queued event and conversation of a sharded bridge.
    expect([0, 1, 2, 3, 4, 5].map((i) => shardTag('cb', i, 6))).toEqual([
      'cb:0.10',
      'cb:1.12',
      'cb:2.13',
      'cb:3.2',
      'cb:4',
      'cb:5',
    ]);
    expect([0, 1, 2].map((i) => shardTag('cb', i, 3))).toEqual(['cb:0.1', 'cb:1.3', 'cb:2.4']);
    expect(conversationHash('c1')).toBe('d0f631ca1ddba8db3bcfcb9e057cdc98');
    expect(['c1', 'conversation-42', '628123'].map((id) => shardIndexOf(id, 6))).toEqual([0, 0, 4]);
    expect(createKeyLayout({ prefix: 'cb', shards: 3, tagged: true }).shardOf('628123').queuePrefix).toBe(
      '{cb:1.3}',
    );
  });

  it('maps a conversation to the same shard from its id and from its key hash; all shards get some', () => {
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 6_000; i++) {
      const id = `conversation-${i}`;
      const index = shardIndexOf(id, 6);
      expect(shardIndexOfHash(conversationHash(id), 6)).toBe(index);
      counts[index] += 1;
    }
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });

  it("gives each business its own keys on the same queues (issue 26), in its shard's slot", () => {
    const layout = createKeyLayout({ prefix: 'cb', shards: 1, tagged: false });
    const a = layout.forNaming(businessNaming('toko-a', false));
    expect(layout.forNaming(SINGLE_BUSINESS_NAMING)).toBe(layout);
    expect(layout.forNaming(businessNaming('toko-a', false))).toBe(a);
    expect(a.business).toBe('toko-a');
    expect(a.shardOf('c1').queuePrefix).toBe('cb');
    expect(a.shardOf('c1').keys.conversation('c1')).toBe(`cb:bridge:b:toko-a:conv:${conversationHash('c1')}`);
    expect(a.global.deadIndex).toBe('cb:bridge:b:toko-a:dead:index');
    expect(a.global.authAlarm).toBe('cb:bridge:b:toko-a:alarm:auth');
    expect(layout.forNaming(businessNaming('toko-b', false)).shardOf('c1').keys.conversation('c1')).not.toBe(
      a.shardOf('c1').keys.conversation('c1'),
    );
    const tagged = createKeyLayout({ prefix: 'cb', shards: 6, tagged: true }).forNaming(
      businessNaming('toko-a', false),
    );
    for (const conversation of ['a', 'conv-42']) {
      const shard = tagged.shardOf(conversation);
      const slots = new Set(
        [
          shard.keys.order(conversation),
          shard.keys.conversation(conversation),
          shard.keys.run('toko-a:event-1'),
          `${shard.queuePrefix}:events:wait`,
        ].map(keySlot),
      );
      expect(slots.size).toBe(1);
      expect(shard.keys.order(conversation).startsWith(`${shard.queuePrefix}:bridge:b:toko-a:`)).toBe(true);
    }
    expect(tagged.global.deadIndex).toBe('{cb}:bridge:b:toko-a:dead:index');
  });

  it('refuses impossible layouts', () => {
    expect(() => createKeyLayout({ prefix: 'cb', shards: 2, tagged: false })).toThrow(/tagged/);
    expect(() => createKeyLayout({ prefix: 'cb', shards: 0, tagged: true })).toThrow(/1 to 128/);
    expect(() => createKeyLayout({ prefix: 'cb', shards: 129, tagged: true })).toThrow(/1 to 128/);
  });
});
