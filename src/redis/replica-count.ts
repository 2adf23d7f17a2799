import { Cluster, type Redis } from 'ioredis';
import { withDeadline } from '../base/with-deadline.js';
import type { RedisClient } from './redis-client.js';
import { primaryConnections } from './scan-keys.js';

/** How many replicas a primary has that take its writes now (what Redis WAIT can count on). */
export interface PrimaryReplicas {
  /** `host:port` of a cluster's primary; undefined for a single Redis or a Sentinel setup's primary. */
  primary: string | undefined;
  replicas: number;
}

/**
 * Replicas in `INFO replication` whose link is up (`state=online`): a replica still loading its
 * first copy (`wait_bgsave`, `send_bulk`) acknowledges no WAIT yet. Redis >= 7 also prints
 * `connected_slaves`, which counts those too; the state is the honest figure.
 */
export function onlineReplicas(info: string): number {
  return info.split('\n').filter((line) => /^slave\d+:.*\bstate=online\b/.test(line.trim())).length;
}

/**
 * The fewest online replicas of any primary (the `convo_bridge_redis_replicas` gauge): what
 * `redis.replicas_ack` needs. Throws when no primary answers (an outage, reported as one).
 */
export async function fewestReplicas(redis: RedisClient, timeoutMs = 2_000): Promise<number> {
  const counts = await readReplicaCounts(redis, timeoutMs);
  if (counts.length === 0) throw new Error('no Redis primary answers');
  return Math.min(...counts.map((count) => count.replicas));
}

/**
 * The replicas of every primary: the one Redis (or Sentinel's primary), or each primary serving
 * slots of a cluster, as the cluster says now (the client's map of the slots is refreshed first: it
 * is otherwise only refreshed when a command fails, so a failover would go unseen). A primary that
 * does not answer within `timeoutMs` is left out: that is an outage, which is reported as one.
 */
export async function readReplicaCounts(redis: RedisClient, timeoutMs = 2_000): Promise<PrimaryReplicas[]> {
  if (redis instanceof Cluster) {
    await withDeadline(
      new Promise<void>((resolve) => redis.refreshSlotsCache(() => resolve())),
      timeoutMs,
      'the cluster slots refresh',
    ).catch(() => undefined);
  }
  const counts = await Promise.all(
    primaryConnections(redis).map(async (node) => {
      try {
        const info = await withDeadline(node.info('replication'), timeoutMs, 'INFO replication');
        return {
          primary: redis instanceof Cluster ? nodeAddress(node) : undefined,
          replicas: onlineReplicas(info),
        };
      } catch {
        return undefined;
      }
    }),
  );
  return counts.filter((count): count is PrimaryReplicas => count !== undefined);
}

function nodeAddress(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}
