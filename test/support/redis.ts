import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';
import type { RedisClient } from '../../src/redis/redis-client.js';

export { startRedisServer } from '../../src/redis/start-redis-server.js';

/** The run's shared test Redis (see global-setup.ts). */
export function testRedisUrl(): string {
  return inject('redisUrl');
}

/** A unique name for queues and key prefixes, so tests never see each other's data. */
export function uniqueName(stem: string): string {
  return `${stem}-${randomBytes(4).toString('hex')}`;
}

/** A plain connection to the test Redis; close it with `.quit()` in afterAll/afterEach. */
export function connectTestRedis(url = testRedisUrl()): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** Deletes every key under a prefix (SCAN, never KEYS; on a cluster, on every primary). */
export async function deleteKeys(redis: RedisClient, prefix: string): Promise<void> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  for (const node of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      // On a cluster the keys of one node may lie in different slots: one DEL per key there.
      if (redis instanceof Cluster) for (const key of keys) await node.del(key);
      else if (keys.length > 0) await node.del(...keys);
    } while (cursor !== '0');
  }
}
