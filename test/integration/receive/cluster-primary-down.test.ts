import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { keySlot } from '../../../src/redis/key-slot.js';
import { type BridgeProcess, spawnBridge } from '../../support/bridge-harness.js';
import {
  findFreePort,
  postMessage,
  startTestTopology,
  type TestTopology,
  writeTopologyConfig,
} from '../../support/topology-world.js';

/**
 * Issue 29, item 5: on a cluster, a webhook whose queue shard lives on a primary the client knows
 * to be down is answered 503 at once, not after the enqueue timeout (about 2 s before); the shards
 * on the other primaries keep answering 200, and the shard takes webhooks again once its primary is
 * back. A cluster of 3 primaries without replicas (`replicas_ack: 0`), so nothing takes over.
 */

const SHARDS = 6;
/** Well under the enqueue timeout (2 s) and the producer's command timeout (1 s). */
const AT_ONCE_MS = 300;

describe('a cluster primary known to be down: its shards answer 503 at once', () => {
  let topology: TestTopology;
  let bridge: BridgeProcess | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let base: string;
  beforeAll(async () => {
    topology = await startTestTopology({ kind: 'cluster', replicas: 0, shards: SHARDS });
    const port = await findFreePort();
    const config = await writeTopologyConfig({
      topology,
      prefix: 'fast503',
      platformUrl: 'http://127.0.0.1:9',
      port,
      redisExtra: 'replicas_ack: 0',
    });
    cleanup = config.cleanup;
    bridge = await spawnBridge('serve', config.path, {});
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await bridge?.stop('SIGTERM');
    await cleanup?.();
    await topology?.stop();
  });

  it('503 in well under a second while the primary is down, 200 elsewhere, 200 again once it is back', async () => {
    const cluster = topology.cluster;
    if (!cluster) throw new Error('a cluster topology has its handle');
    const layout = createKeyLayout({ prefix: 'fast503', shards: SHARDS, tagged: true });
    const slotOf = (conversationId: string) => keySlot(layout.shardOf(conversationId).queuePrefix);
    const victim = (await cluster.primaries()).find((p) =>
      p.slots.some(([start, end]) => slotOf('c-down-0') >= start && slotOf('c-down-0') <= end),
    );
    if (!victim) throw new Error('no primary serves the first conversation');
    const onVictim = (conversationId: string) =>
      victim.slots.some(([start, end]) => slotOf(conversationId) >= start && slotOf(conversationId) <= end);
    const ids = Array.from({ length: 200 }, (_unused, n) => `c-down-${n}`);
    const down = ids.filter(onVictim).slice(0, 10);
    const up = ids.filter((id) => !onVictim(id)).slice(0, 10);

    // Healthy: every shard stores (this also opens the producer's connection to each primary).
    for (const id of [...down, ...up]) expect(await postMessage(base, id)).toBe(200);

    await cluster.killNode(victim.port);
    const timed = async (id: string) => {
      const started = performance.now();
      const status = await postMessage(base, id);
      return { status, ms: performance.now() - started };
    };
    // The client learns it when the connection closes; then every webhook of those shards is
    // answered at once.
    await waitFor(
      async () => {
        const answer = await timed(down[0] as string);
        return answer.status === 503 && answer.ms < AT_ONCE_MS;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a 503 at once for a shard of the killed primary' },
    );
    for (const id of down) {
      const answer = await timed(id);
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(AT_ONCE_MS);
    }
    for (const id of up) expect(await postMessage(base, id)).toBe(200);
    const said = bridge?.logs.join('\n') ?? '';
    expect(said).toContain(`its Redis primary 127.0.0.1:${victim.port} is unreachable`);
    expect(said).toContain(`the Redis primary 127.0.0.1:${victim.port} serving queue shard`);

    // Back: the same node with its data; its shards take webhooks again by themselves.
    await cluster.restartNode(victim.port);
    await waitFor(async () => (await postMessage(base, down[0] as string)) === 200, {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: 'a shard of the restarted primary to take webhooks again',
    });
    for (const id of down) expect(await postMessage(base, id)).toBe(200);
    expect(bridge?.logs.join('\n')).toContain('has a reachable Redis primary again');
  }, 90_000);
});
