import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { MAX_LINK_MS } from './console-link.js';

/**
 * Revoked console links: a sorted set of link ids, each scored by when its revocation may be
 * forgotten (no link lives longer than MAX_LINK_MS, so by then the link has expired by itself).
 * Bounded: each revocation trims those past their time.
 */
export async function revokeLink(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'linkRevocations'>,
  id: string,
  now: number = Date.now(),
): Promise<void> {
  await redis
    .multi()
    .zadd(keys.linkRevocations, now + MAX_LINK_MS, id)
    .zremrangebyscore(keys.linkRevocations, '-inf', `(${now}`)
    .pexpire(keys.linkRevocations, MAX_LINK_MS)
    .exec();
}

export async function isLinkRevoked(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'linkRevocations'>,
  id: string,
): Promise<boolean> {
  return (await redis.zscore(keys.linkRevocations, id)) !== null;
}
