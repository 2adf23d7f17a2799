import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { type BridgeProcess, spawnBridge } from '../../support/bridge-harness.js';
import {
  findFreePort,
  postMessage,
  startSilentPlatform,
  startTestTopology,
  type TestTopology,
  type TopologyKind,
  unfinishedEvents,
  writeTopologyConfig,
} from '../../support/topology-world.js';

/**
 * Issue 29, item 1: `start`, `serve` and `work` exit within `worker.shutdown_grace` and a few seconds
 * of SIGTERM when Redis goes away (a cluster, a Sentinel primary, a single Redis), before the
 * SIGTERM or at the same moment; what was stored and not finished is still in Redis afterwards;
 * the log stays short. Before the fix a `work` on a cluster whose nodes shut down with it was still
 * running 45 s later, logging "Failed to refresh slots cache." thousands of times.
 *
 * Each row starts its own topology (append-only files on, so that a restart shows what was kept),
 * a platform that never answers (the jobs stay in flight: the shutdown must cut them short) and the
 * bridge from the build, as users run it.
 */

const GRACE_MS = 5_000;
/** What a stop may take beyond the grace (closing steps, the CLI's exit). */
const MARGIN_MS = 5_000;
const WEBHOOKS = 12;
/** Log lines a process may write from the moment Redis goes away until it has exited. */
const MAX_LINES = 25;

interface Row {
  name: string;
  kind: TopologyKind;
  processes: ('start' | 'serve' | 'work')[];
  /** Redis goes away with the SIGTERM, 3 s before it, or not at all (only the jobs hang). */
  when: 'during' | 'before' | 'never';
}

const ROWS: Row[] = [
  {
    name: 'cluster (3 primaries, 1 replica each): serve and work, the nodes shut down with the SIGTERM',
    kind: 'cluster',
    processes: ['serve', 'work'],
    when: 'during',
  },
  {
    name: 'cluster: start, the nodes gone 3 s before the SIGTERM',
    kind: 'cluster',
    processes: ['start'],
    when: 'before',
  },
  {
    name: 'Sentinel (primary, 1 replica, 3 sentinels): start, the data nodes shut down with the SIGTERM',
    kind: 'sentinel',
    processes: ['start'],
    when: 'during',
  },
  {
    name: 'Sentinel: serve and work, the data nodes gone 3 s before the SIGTERM',
    kind: 'sentinel',
    processes: ['serve', 'work'],
    when: 'before',
  },
  {
    name: 'single Redis: serve and work, Redis shuts down with the SIGTERM',
    kind: 'single',
    processes: ['serve', 'work'],
    when: 'during',
  },
  {
    name: 'single Redis that stays up: start, in-flight jobs outlast the grace',
    kind: 'single',
    processes: ['start'],
    when: 'never',
  },
];

/** SIGTERM, then the exit code and how long it took; SIGKILL after `deadlineMs` (code null). */
async function stopTimed(
  bridge: BridgeProcess,
  deadlineMs: number,
): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const killer = setTimeout(() => bridge.proc.kill('SIGKILL'), deadlineMs);
  try {
    const code = await bridge.stop('SIGTERM');
    return { code, ms: Date.now() - started };
  } finally {
    clearTimeout(killer);
  }
}

/** A webhook answered 200, redelivered on 503 as the platform would (the redelivery is deduplicated). */
async function deliver(baseUrl: string, conversationId: string): Promise<void> {
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    if ((await postMessage(baseUrl, conversationId)) === 200) return;
    await sleep(300);
  }
  throw new Error(`the webhook of ${conversationId} was not acknowledged in 10 attempts`);
}

describe('shutdown bounded whatever Redis does', () => {
  let topology: TestTopology | undefined;
  let bridges: BridgeProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const bridge of bridges) bridge.proc.kill('SIGKILL');
    for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
    await topology?.stop();
    topology = undefined;
    bridges = [];
  });

  it.each(ROWS)(
    '$name',
    async (row) => {
      topology = await startTestTopology({ kind: row.kind, replicas: row.kind === 'single' ? 0 : 1 });
      const platform = await startSilentPlatform();
      cleanups.push(platform.close);
      const port = await findFreePort();
      const prefix = `shut-${row.kind}`;
      const config = await writeTopologyConfig({
        topology,
        prefix,
        platformUrl: platform.url,
        port,
        graceSeconds: GRACE_MS / 1000,
      });
      cleanups.push(config.cleanup);
      for (const mode of row.processes) bridges.push(await spawnBridge(mode, config.path, {}));

      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < WEBHOOKS; i += 1) await deliver(base, `c-shut-${i}`);
      // Jobs in flight: the worker has called the platform, which holds every request.
      await waitFor(() => platform.requests() > 0, { timeoutMs: 15_000, what: 'a platform call' });

      const linesBefore = bridges.map((bridge) => bridge.logs.length);
      const gone = row.when === 'never' ? Promise.resolve() : topology.killDataNodes();
      if (row.when === 'before') {
        await gone;
        await sleep(3_000);
      }
      const stops = await Promise.all(bridges.map((bridge) => stopTimed(bridge, 60_000)));
      await gone;

      stops.forEach((stop, index) => {
        const bridge = bridges[index] as BridgeProcess;
        const output = bridge.logs.join('\n');
        expect(stop.code, `${row.processes[index]} exit code\n${output}`).toBe(0);
        expect(stop.ms, `${row.processes[index]} took ${stop.ms} ms to exit\n${output}`).toBeLessThan(
          GRACE_MS + MARGIN_MS,
        );
        const lines = bridge.logs.slice(linesBefore[index]).filter((line) => line.trim() !== '');
        expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(MAX_LINES);
        expect(output).not.toMatch(/\n\s+at /); // no stack traces
        expect(output).toContain('"msg":"stopped"');
      });

      // Nothing lost: every acknowledged event is still in a job for the next worker.
      if (row.when === 'never') {
        expect(bridges[0]?.logs.join('\n')).toContain('in-flight jobs did not finish in time');
      } else await topology.restartDataNodes();
      expect(await unfinishedEvents(topology, prefix)).toBe(WEBHOOKS);
    },
    150_000,
  );
});
