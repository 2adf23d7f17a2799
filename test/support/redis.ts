import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';

export { startRedisServer } from '../../src/shared/start-redis-server.js';

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

/** Deletes every key under a prefix (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
