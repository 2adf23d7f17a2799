import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import { isDatabaseRefusal } from '../redis/database-guard.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisClient, type RedisTopology } from '../redis/redis-connection.js';
import type { OutageReporter } from './redis-outage.js';

/**
 * The bridge's control connection: it claims the key layout, answers readiness and feeds the
 * queue gauges, and it is the one connection whose errors are reported (once per interval, by
 * the outage reporter) while Redis is away.
 */
export function connectControlRedis(
  topology: RedisTopology,
  deps: { address: string; outage: OutageReporter; log: Logger },
): RedisClient {
  const { address, outage, log } = deps;
  const redis = createRedisClient(topology, {
    maxRetriesPerRequest: 1,
    connectionName: 'convo-bridge:control',
    // Reconnect at most 1 s apart, so the bridge notices soon that Redis is back.
    retryStrategy: (times) => Math.min(times * 100, 1_000),
  });
  redis.on('error', (error: Error) => {
    // A refused database is not an outage: the layout check stops the bridge and says why.
    if (isDatabaseRefusal(error)) return;
    const warning = outage.down(describeError(error));
    if (warning) log.warn({ redis: address }, warning);
  });
  redis.on('ready', () => {
    const back = outage.up();
    if (back) log.info({ redis: address }, back);
    // Checked on every (re)connection: the Redis that came back may be another one.
    void checkRedisPolicy(redis, log);
  });
  return redis;
}

/** Durable-before-ack needs Redis to keep what it took: say so loudly when it may evict keys. */
async function checkRedisPolicy(redis: RedisClient, log: Logger): Promise<void> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy && policy !== 'noeviction') {
      log.error(
        { policy },
        `Redis maxmemory-policy is "${policy}": under memory pressure Redis may EVICT queued events and ` +
          'dedupe keys, losing or repeating work. Set `maxmemory-policy noeviction` (BullMQ requires it).',
      );
    }
  } catch (error) {
    log.warn(
      { err: describeError(error) },
      'could not read Redis maxmemory-policy (CONFIG may be disabled); make sure it is noeviction',
    );
  }
}
