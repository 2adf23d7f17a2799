import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { businessNaming } from '../../../src/events/business-naming.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { claimLayout } from '../../../src/queue/layout-record.js';
import { reshard } from '../../../src/queue/reshard.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

/**
 * `reshard` moves every business's conversations with them (issue 26): a business's conversation
 * keys (`<root>:b:<id>:conv:<hash>`) go to the conversation's new shard and keep their business.
 */
describe('reshard with several businesses (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    await deleteKeys(redis, prefix);
    await deleteKeys(redis, `{${prefix}`);
  });

  it("moves each business's conversation state to the conversation's new shard", async () => {
    prefix = uniqueName('t-reshard-biz');
    const from = createKeyLayout({ prefix, shards: 1, tagged: false });
    await claimLayout(redis, from);
    const conversations = ['conv-1', 'conv-2', 'conv-3', 'conv-4', 'conv-5', 'conv-6'];
    for (const id of conversations) {
      await redis.hset(
        from.forNaming(businessNaming('toko-a', false)).shardOf(id).keys.conversation(id),
        'lastIn',
        `a-${id}`,
      );
      await redis.hset(
        from.forNaming(businessNaming('toko-b', false)).shardOf(id).keys.conversation(id),
        'lastIn',
        `b-${id}`,
      );
      await redis.hset(from.shardOf(id).keys.conversation(id), 'lastIn', `default-${id}`);
    }
    const to = createKeyLayout({ prefix, shards: 3, tagged: true });
    const report = await reshard({ redis, prefix, to });
    expect(report.conversations).toBe(conversations.length * 3);
    for (const id of conversations) {
      expect(
        await redis.hget(
          to.forNaming(businessNaming('toko-a', false)).shardOf(id).keys.conversation(id),
          'lastIn',
        ),
      ).toBe(`a-${id}`);
      expect(
        await redis.hget(
          to.forNaming(businessNaming('toko-b', false)).shardOf(id).keys.conversation(id),
          'lastIn',
        ),
      ).toBe(`b-${id}`);
      expect(await redis.hget(to.shardOf(id).keys.conversation(id), 'lastIn')).toBe(`default-${id}`);
      expect(
        await redis.exists(from.forNaming(businessNaming('toko-a', false)).shardOf(id).keys.conversation(id)),
      ).toBe(0);
    }
  });
});
