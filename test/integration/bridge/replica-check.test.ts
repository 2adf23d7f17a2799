import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { createReceiver } from '../../../src/receive/create-receiver.js';
import { type BridgeProcess, spawnBridge } from '../../support/bridge-harness.js';
import {
  findFreePort,
  postMessage,
  startTestTopology,
  type TestTopology,
  TOPOLOGY_WEBHOOK,
  writeTopologyConfig,
} from '../../support/topology-world.js';

/**
 * Issue 29, item 2: with `redis.replicas_ack` at its default (1 with Sentinel or a cluster) and
 * primaries without a replica, every webhook is answered 503. The bridge says so at start-up (one
 * line naming the setting and the replicas found), /readyz answers 503 with that reason, and the
 * 503s are logged once per interval with a count instead of once per webhook (before: /readyz 200
 * and 205 warnings for 200 webhooks). While running, a replica that goes away and comes back is
 * noticed both ways. Each test starts its own topology from `redis-server`.
 */

const WEBHOOKS = 200;
const REPLICA_LINE = /redis\.replicas_ack is 1 but/;

/** POSTs `count` webhooks, `parallel` at a time; resolves with their statuses. */
async function postMany(baseUrl: string, count: number, parallel = 20): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_unused, offset) =>
      postMessage(baseUrl, `c-replicas-${start + offset}`),
    );
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

async function readiness(baseUrl: string): Promise<{ status: number; error?: string }> {
  const response = await fetch(`${baseUrl}/readyz`);
  const body = (await response.json()) as { error?: string };
  return { status: response.status, ...(body.error === undefined ? {} : { error: body.error }) };
}

const textOf = (line: string) => {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
  } catch {
    return line;
  }
};

describe('topology checks: primaries with fewer replicas than redis.replicas_ack', () => {
  let topology: TestTopology | undefined;
  let bridge: BridgeProcess | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await bridge?.stop('SIGTERM');
    for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
    await topology?.stop();
    topology = undefined;
    bridge = undefined;
  });

  const launch = async (mode: 'start' | 'serve', t: TestTopology, prefix: string) => {
    const port = await findFreePort();
    const config = await writeTopologyConfig({
      topology: t,
      prefix,
      platformUrl: 'http://127.0.0.1:9',
      port,
    });
    cleanups.push(config.cleanup);
    bridge = await spawnBridge(mode, config.path, {});
    return { base: `http://127.0.0.1:${port}`, process: bridge };
  };

  it.each([
    {
      name: 'a cluster of 3 primaries without replicas (start)',
      kind: 'cluster' as const,
      mode: 'start' as const,
    },
    {
      name: 'a Sentinel setup whose primary has no replica (serve)',
      kind: 'sentinel' as const,
      mode: 'serve' as const,
    },
  ])(
    '$name: one line at start-up, /readyz 503 with the reason, 200 webhooks answered 503 with a bounded log',
    async ({ kind, mode }) => {
      topology = await startTestTopology({ kind, replicas: 0 });
      const { base, process } = await launch(mode, topology, `replicas-${kind}`);

      const line = await waitFor(() => process.logs.find((l) => REPLICA_LINE.test(textOf(l))), {
        timeoutMs: 10_000,
        what: 'the start-up line about missing replicas',
      });
      const said = textOf(line);
      if (kind === 'cluster') {
        expect(said).toMatch(
          /3 of 3 primaries have fewer replicas: 127\.0\.0\.1:\d+ has 0, 127\.0\.0\.1:\d+ has 0, 127\.0\.0\.1:\d+ has 0/,
        );
      } else {
        expect(said).toMatch(/the primary \(primary "cbmaster" via sentinels [^)]+\) has 0/);
      }
      expect(said).toContain('set redis.replicas_ack: 0');

      const ready = await readiness(base);
      expect(ready.status).toBe(503);
      expect(ready.error).toBe(said);

      const linesBefore = process.logs.length;
      const statuses = await postMany(base, WEBHOOKS);
      expect(statuses.filter((status) => status === 503)).toHaveLength(WEBHOOKS);
      const during = process.logs.slice(linesBefore).filter((l) => l.trim() !== '');
      // One line per reason, not one per webhook: the missing replica, and under this load also
      // the command and enqueue timeouts of webhooks queued behind the batches that wait in WAIT.
      const refused = during.filter((l) => textOf(l).startsWith('webhook answered 503'));
      const reasons = new Set(refused.map((l) => String((JSON.parse(l) as { err?: unknown }).err)));
      expect(refused.length, refused.join('\n')).toBe(reasons.size);
      expect(reasons.size, [...reasons].join('\n')).toBeLessThanOrEqual(3);
      expect([...reasons].some((reason) => reason.startsWith('only 0 of 1 Redis replica(s)'))).toBe(true);
      // The receiver's lines (a `start` also runs the events that reached the primary before WAIT
      // gave up: they are stored, and the platform's redelivery is recognised as a duplicate).
      const receiverLines = during.filter((l) => l.includes('"component":"receiver"'));
      expect(receiverLines.length, receiverLines.join('\n')).toBeLessThanOrEqual(3);
      // Said once at start-up, not again while nothing changes.
      expect(process.logs.filter((l) => REPLICA_LINE.test(textOf(l)))).toHaveLength(1);
    },
    90_000,
  );

  it('cluster: the repeated 503s are one line per interval with their count (the receiver in-process)', async () => {
    topology = await startTestTopology({ kind: 'cluster', replicas: 0 });
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    );
    const receiver = createReceiver({
      topology: topology.topology,
      // A cluster needs the keys of one batch under one hash tag.
      layout: createKeyLayout({ prefix: 'replicas-inproc', shards: 1, tagged: true }),
      prefix: 'replicas-inproc',
      secrets: [TOPOLOGY_WEBHOOK.secret],
      replicasAck: 1,
      logger,
      repeatLogIntervalMs: 2_000,
    });
    const listening = await receiver.listen(0);
    cleanups.push(() => receiver.close());
    const statuses = await postMany(listening.url, 50, 10);
    expect(statuses.every((status) => status === 503)).toBe(true);
    // Each reason: its first 503 at once, the others as one line with their count at the end of
    // the interval; every 503 is accounted for.
    const refused = () => lines.filter((l) => String(l.msg).startsWith('webhook answered 503'));
    const accounted = () =>
      refused().reduce((sum, l) => sum + (typeof l.repeated === 'number' ? l.repeated : 1), 0);
    await waitFor(() => accounted() === 50, { timeoutMs: 6_000, what: 'the lines with the counts' });
    // A few seconds of 503s with an interval of 2 s: a handful of lines, not 50.
    expect(refused().length, JSON.stringify(refused(), null, 1)).toBeLessThanOrEqual(8);
    const replicaLines = refused().filter((l) => String(l.err).startsWith('only 0 of 1 Redis replica(s)'));
    expect(replicaLines[0]?.repeated).toBeUndefined();
    expect(replicaLines[1]?.repeated).toBeGreaterThan(5);
    expect(String(replicaLines[1]?.msg)).toMatch(/\d+ more for the same reason in the last 2 s/);
  }, 90_000);

  it('cluster with a replica per primary: a replica that goes away while running makes /readyz 503, and 200 once it is back', async () => {
    topology = await startTestTopology({ kind: 'cluster', replicas: 1 });
    const cluster = topology.cluster;
    if (!cluster) throw new Error('a cluster topology has its handle');
    const { base, process } = await launch('start', topology, 'replicas-running');
    await waitFor(async () => (await readiness(base)).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: '/readyz 200 with every replica up',
    });
    expect(process.logs.some((l) => REPLICA_LINE.test(textOf(l)))).toBe(false);

    const replica = (await cluster.replicas())[0];
    if (!replica) throw new Error('the cluster has replicas');
    const primary = (await cluster.primaries()).find((p) => p.id === replica.primaryId);
    await cluster.killNode(replica.port);
    const notReady = await waitFor(
      async () => {
        const answer = await readiness(base);
        return answer.status === 503 ? answer : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: '/readyz 503 once a replica is gone' },
    );
    expect(notReady.error).toMatch(
      new RegExp(
        `redis\\.replicas_ack is 1 but 1 of 3 primaries have fewer replicas: 127\\.0\\.0\\.1:${primary?.port} has 0`,
      ),
    );
    await waitFor(() => process.logs.some((l) => REPLICA_LINE.test(textOf(l))), {
      timeoutMs: 5_000,
      what: 'the line about the missing replica',
    });
    expect(process.logs.filter((l) => REPLICA_LINE.test(textOf(l)))).toHaveLength(1);

    await cluster.restartNode(replica.port);
    await waitFor(async () => (await readiness(base)).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: '/readyz 200 once the replica is back',
    });
    // The child's log reaches the test through a pipe, after the answer that follows it.
    await waitFor(
      () => process.logs.some((l) => textOf(l).includes('replica(s) redis.replicas_ack asks for again')),
      { timeoutMs: 5_000, what: 'the line that says the replicas are back' },
    );
  }, 120_000);
});
