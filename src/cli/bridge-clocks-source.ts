import type { Queue } from 'bullmq';
import { loadConfig } from '../config/load-config.js';
import type { InboxClocks } from '../emulator/inbox-clocks.js';
import { layoutFor } from '../queue/key-layout.js';
import { readOnlyQueue } from '../queue/read-only-queue.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import { createRedisClient } from '../redis/redis-connection.js';
import { listConversationClocks } from '../worker/timers/list-timers.js';
import { resolveRedisTarget } from './redis-target.js';

/**
 * The emulator's inbox page shows a bridge's clocks when `convo-bridge emulator` is
 * given `--clocks-config FILE`: this reads them from that bridge's Redis, as `timers list` does.
 * The wiring lives in the CLI so the emulator itself imports nothing from the bridge.
 */
export async function bridgeClocksSource(configPath: string) {
  const target = await resolveRedisTarget({ config: configPath }, process.env, undefined, 'any');
  // A bridge of several businesses: the inbox's business is the one whose Business ID it is.
  const { businesses } = await loadConfig(configPath, { allowMissingEnv: true });
  const businessFor = (businessId: string) =>
    businesses.find((b) => b.config.platform.auth.businessId === businessId) ??
    businesses.find((b) => b.naming.tag === '');
  const redis = createRedisClient(target.topology, {
    maxRetriesPerRequest: 1,
    connectionName: 'convo-bridge:emulator-clocks',
  });
  redis.on('error', () => {});
  const layout = layoutFor({
    topology: target.topology,
    prefix: target.prefix,
    shards: target.config?.redis.shards ?? 1,
  });
  const queues = layout.all.map((shard) => readOnlyQueue(QUEUE_NAMES.timers, redis, shard.queuePrefix));
  return {
    clocks: async (conversationId: string, businessId: string): Promise<InboxClocks | null> => {
      const business = businessFor(businessId);
      if (business === undefined) return null;
      const scoped = layout.forNaming(business.naming);
      const shard = scoped.shardOf(conversationId);
      const queue = queues[shard.index] as Queue;
      const [found] = await listConversationClocks(redis, shard.keys, queue, {
        config: business.config,
        conversationId,
      });
      return found ?? { timers: [], window: { applies: false, closesAt: null, closesLocal: null } };
    },
    close: async () => {
      await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
      redis.disconnect();
    },
  };
}
