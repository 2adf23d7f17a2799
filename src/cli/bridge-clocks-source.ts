import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { InboxClocks } from '../emulator/inbox-page.js';
import { bridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import { listConversationClocks } from '../worker/list-timers.js';
import { resolveRedisTarget } from './redis-target.js';

/**
 * The emulator's inbox page shows a bridge's clocks (issue 16) when `convo-bridge emulator` is
 * given `--clocks-config FILE`: this reads them from that bridge's Redis, as `timers list` does.
 * The wiring lives in the CLI so the emulator itself imports nothing from the bridge.
 */
export async function bridgeClocksSource(configPath: string) {
  const target = await resolveRedisTarget({ config: configPath });
  const redis = new Redis(target.redisUrl, {
    maxRetriesPerRequest: 1,
    connectionName: 'convo-bridge:emulator-clocks',
  });
  redis.on('error', () => {});
  const queue = new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: target.prefix });
  const keys = bridgeKeys(target.prefix);
  return {
    clocks: async (conversationId: string): Promise<InboxClocks | null> => {
      const [found] = await listConversationClocks(redis, keys, queue, {
        ...(target.config ? { config: target.config } : {}),
        conversationId,
      });
      return found ?? { timers: [], window: { applies: false, closesAt: null, closesLocal: null } };
    },
    close: async () => {
      await queue.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}
