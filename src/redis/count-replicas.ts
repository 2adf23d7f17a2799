import { Cluster } from 'ioredis';
import type { RedisClient } from './redis-client.js';

/**
 * The replicas of one primary that WAIT can count, from its `INFO replication`: the
 * `slaveN:ip=...,state=online,...` lines. A replica still loading its first copy (`wait_bgsave`,
 * `send_bulk`) acknowledges nothing yet, so it does not count. Redis >= 7 also prints
 * `connected_slaves`, which counts those too; the state is the honest figure.
 */
export function onlineReplicas(info: string): number {
  let online = 0;
  for (const line of info.split(/\r?\n/)) {
    if (/^slave\d+:/.test(line) && /(^|[:,])state=online(,|$)/.test(line)) online++;
  }
  return online;
}

/**
 * The fewest online replicas of any primary: of the one Redis (a single URL, or Sentinel's current
 * primary), or of each primary of a cluster. This is what `redis.replicas_ack` needs: a webhook
 * whose event lands on a primary with fewer replicas than that is answered 503 (issue 29).
 * Throws when no primary is known yet (a cluster client before its first slots refresh).
 */
export async function fewestReplicas(redis: RedisClient): Promise<number> {
  const primaries = redis instanceof Cluster ? redis.nodes('master') : [redis];
  if (primaries.length === 0) throw new Error('no Redis primary is known yet');
  const counts = await Promise.all(
    primaries.map(async (node) => onlineReplicas(await node.info('replication'))),
  );
  return Math.min(...counts);
}
