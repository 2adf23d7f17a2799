import type { TestProject } from 'vitest/node';
import { startRedisCluster } from '../../tools/redis/redis-topology.js';

/**
 * The `cluster` project (vitest.config.ts): the end-to-end suite's main files run against a real
 * 3-primary Redis Cluster (with a replica each), started here from `redis-server`, with
 * `redis.shards: 6` (issue 14). test/support/e2e-world.ts rewrites each world's config for it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
  project.provide('e2eCluster', {
    nodes: cluster.nodes.map((n) => `${n.host}:${n.port}`),
    shards: 6,
  });
  return () => cluster.stop();
}
