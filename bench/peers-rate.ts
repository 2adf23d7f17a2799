/**
 * Open-loop latency of the bridge alone (issue 11: e2e p99 <= 50 ms at 200 events/s): a private
 * redis-server with the append-only file on, the harness's fake API, `node dist/cli.js start` with
 * the harness's bridge.yaml (as bench-matrix.sh's `bridge` target starts it), a 500-event warm-up,
 * then `load.mjs --rate 200` for PEERS_RATE_N events (3,000 = 15 s). Run by `npm run bench:peers`
 * after the matrix, or alone: `npm run build && tsx bench/peers-rate.ts`.
 * Env: PEERS_RATE (200), PEERS_RATE_N (3000), PEERS_RATE_WARMUP_N (500).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '../src/redis/start-redis-server.js';
import {
  exitUnlessHarness,
  faults,
  LOAD_HARNESS,
  type LoadResult,
  round,
  runLoad,
  startBridgeStack,
} from './peers-support.js';

export const OPEN_LOOP_P99_GOAL_MS = 50;

export interface OpenLoopResult {
  rate: number;
  events: number;
  e2eP50Ms: number | null;
  e2eP99Ms: number | null;
  e2eMaxMs: number | null;
  ackP99Ms: number | null;
  /** How far load.mjs's sender fell behind its schedule (large = the load generator was starved). */
  maxScheduleLagMs: number | null;
  missing: number;
  duplicated: number;
  wrong: number;
  rssMaxMb: number | null;
  cpuMsPerEvent: number | null;
  met: boolean;
  raw: LoadResult;
}

export async function runOpenLoop(
  options: { rate?: number; events?: number; warmup?: number } = {},
): Promise<OpenLoopResult> {
  const rate = options.rate ?? Number(process.env.PEERS_RATE ?? 200);
  const events = options.events ?? Number(process.env.PEERS_RATE_N ?? 3000);
  const warmup = options.warmup ?? Number(process.env.PEERS_RATE_WARMUP_N ?? 500);
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-peers-rate-'));
  const redis = await startRedisServer({ appendOnly: true });
  const stops: (() => Promise<void>)[] = [() => redis.stop()];
  try {
    const { api, bridge } = await startBridgeStack(dir, redis.url, stops);
    const common = ['--url', bridge.url, '--api', api.url, '--timeout', '60'];
    await runLoad([...common, '-n', String(warmup), '-c', '32', '--settle', '1'], 180_000);
    const sendSeconds = events / rate;
    const r = await runLoad(
      [...common, '-n', String(events), '--rate', String(rate), '--pids', String(bridge.pid)],
      (sendSeconds + 120) * 1000,
    );
    const f = faults(r);
    return {
      rate,
      events,
      e2eP50Ms: r.e2e_p50_ms ?? null,
      e2eP99Ms: r.e2e_p99_ms ?? null,
      e2eMaxMs: r.e2e_max_ms ?? null,
      ackP99Ms: r.ack_p99_ms ?? null,
      maxScheduleLagMs: r.max_schedule_lag_ms ?? null,
      ...f,
      rssMaxMb: r.peer?.rss_max_mb ?? null,
      cpuMsPerEvent: r.peer ? round((r.peer.cpu_s * 1000) / events, 3) : null,
      met:
        r.e2e_p99_ms !== null &&
        r.e2e_p99_ms !== undefined &&
        r.e2e_p99_ms <= OPEN_LOOP_P99_GOAL_MS &&
        f.missing + f.duplicated + f.wrong === 0,
      raw: r,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function openLoopLine(o: OpenLoopResult): string {
  return (
    `open loop ${o.rate}/s, ${o.events} events, bridge alone: e2e p50 ${o.e2eP50Ms} ms, p99 ${o.e2eP99Ms} ms ` +
    `(goal <= ${OPEN_LOOP_P99_GOAL_MS} ms, 0 missing/dup/wrong: met ${o.met ? 'yes' : 'NO'}), max ${o.e2eMaxMs} ms, ` +
    `ack p99 ${o.ackP99Ms} ms, sender lag max ${o.maxScheduleLagMs} ms, missing/dup/wrong ` +
    `${o.missing}/${o.duplicated}/${o.wrong}, RSS max ${o.rssMaxMb} MB, CPU ${o.cpuMsPerEvent} ms/event`
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  exitUnlessHarness('bench:peers (its open-loop part)', LOAD_HARNESS);
  console.log(openLoopLine(await runOpenLoop()));
}
