import { createServer } from 'node:net';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCustomer } from '../../../src/base/customer-match.js';
import { waitFor } from '../../../src/base/wait-for.js';
import { ForgetUnavailableError } from '../../../src/privacy/check-every-node.js';
import { findCustomer } from '../../../src/privacy/find-customer.js';
import { forgetConversation } from '../../../src/privacy/forget-conversation.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { keySlot } from '../../../src/redis/key-slot.js';
import { type RedisClusterHandle, startRedisCluster } from '../../../tools/redis/redis-topology.js';

/** A loopback port nothing listens on (taken from the system, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// The safety checks belong to forget itself, not to the CLI: code that calls the privacy API
// directly must be refused the same way when a node is down, and nothing may be erased.
describe('the forget API refuses what it cannot reach whole', () => {
  it('refuses on a Redis that does not answer', async () => {
    const port = await closedPort();
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const layout = createKeyLayout({ prefix: 'fa', shards: 1, tagged: false });
    try {
      await expect(forgetConversation(redis, layout, 'c-1')).rejects.toBeInstanceOf(ForgetUnavailableError);
      await expect(findCustomer(redis, layout, parseCustomer('budi@example.com'))).rejects.toThrow(
        /cannot reach Redis node 127\.0\.0\.1:\d+.*nothing was erased/,
      );
    } finally {
      redis.disconnect();
    }
  });

  describe('on a Redis Cluster with a primary down', () => {
    let cluster: RedisClusterHandle;
    let redis: Cluster;
    const layout = createKeyLayout({ prefix: 'fa', shards: 6, tagged: true });

    beforeAll(async () => {
      cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
      redis = new Cluster(cluster.nodes.map((n) => ({ ...n })));
    });
    afterAll(async () => {
      redis?.disconnect();
      await cluster?.stop();
    });

    it('refuses, naming the node, and erases nothing', async () => {
      const id = 'c-forget-api-node-down';
      const key = layout.shardOf(id).keys.conversation(id);
      await redis.hset(key, 'lastIn', '2026-11-26T00:00:00.000Z');
      const primaries = await cluster.primaries();
      const other = primaries.find(
        (p) => !p.slots.some(([low, high]) => keySlot(key) >= low && keySlot(key) <= high),
      );
      if (!other) throw new Error('no primary without the conversation');
      await cluster.killNode(other.port);
      // Until the cluster marks the node failed its connection may answer with other errors: try
      // again until forget refuses. A call that resolves erased across a cluster it could not reach.
      const refused = await waitFor(
        async () => {
          try {
            await forgetConversation(redis, layout, id, { waitMs: 1000 });
            return 'erased';
          } catch (error) {
            return error instanceof ForgetUnavailableError ? error : undefined;
          }
        },
        { timeoutMs: 20_000, intervalMs: 500, what: 'forgetConversation to refuse the cluster' },
      );
      expect(refused).toBeInstanceOf(ForgetUnavailableError);
      expect(String((refused as Error).message)).toContain(`${other.port}`);
      expect(await redis.exists(key)).toBe(1);
    });
  });
});
