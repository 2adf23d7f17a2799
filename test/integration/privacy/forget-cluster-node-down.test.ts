import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { claimLayout, layoutRecordKey } from '../../../src/queue/layout-record.js';
import { keySlot } from '../../../src/redis/key-slot.js';
import { type RedisClusterHandle, startRedisCluster } from '../../../tools/redis/redis-topology.js';
import { cli } from '../../support/cli-in-process.js';

// Issue 27: forget "exits non-zero with the reason when it cannot reach every node", and then
// erases nothing (an erasure that reached some nodes would report success while data stays).
describe('forget on a Redis Cluster with a primary down', () => {
  let cluster: RedisClusterHandle;
  let redis: Cluster;
  const layout = createKeyLayout({ prefix: 'fg', shards: 6, tagged: true });

  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
    redis = new Cluster(cluster.nodes.map((n) => ({ ...n })));
  });
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it('refuses, naming the node, erases nothing, and erases once the node is back', async () => {
    const id = 'c-forget-node-down';
    const key = layout.shardOf(id).keys.conversation(id);
    await claimLayout(redis, layout); // as a bridge does at start: operator commands read it
    await redis.hset(key, 'lastIn', '2026-11-26T00:00:00.000Z');
    // Kill a primary that does not hold the conversation: its state is reachable, the rest is not.
    const primaries = await cluster.primaries();
    const serves = (p: (typeof primaries)[number], k: string) =>
      p.slots.some(([low, high]) => keySlot(k) >= low && keySlot(k) <= high);
    const holder = primaries.find((p) => serves(p, key));
    // Nor the layout record: the killed node comes back empty (no persistence in this test).
    const other = primaries.find((p) => p !== holder && !serves(p, layoutRecordKey('fg', true)));
    if (!other) throw new Error('no other primary');
    await cluster.killNode(other.port);
    const args = [
      'forget',
      '--redis-url',
      `redis://127.0.0.1:${holder?.port}`,
      '--prefix',
      'fg',
      '--conversation',
      id,
    ];
    const refused = await waitFor(
      async () => {
        const run = await cli(args);
        return run.code !== 0 && /down or unreachable|cannot reach|ECONNREFUSED/.test(run.stderr)
          ? run
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: 'forget to see the node down' },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${other.port}`);
    expect(await redis.exists(key)).toBe(1);

    await cluster.restartNode(other.port);
    const done = await cli(args);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/conversation state\s+1/);
    expect(await redis.exists(key)).toBe(0);
  });
});
