/**
 * `npm run bench:cost` (a part of `npm run bench`; issue 11): what one event costs, in Redis and
 * in the bridge. A private redis-server (append-only file on), the shared harness's fake API, and
 * `node dist/cli.js start` with the harness's bridge.yaml (host pinned to 127.0.0.1) on loopback.
 * Idle RSS is read once `start` is ready and has settled; then a warm-up (load.mjs -n 500), then
 * CONFIG RESETSTAT and the CPU counters, then load.mjs -n COST_N (5000) -c 32, then per event:
 * Redis commands (INFO commandstats: every call, so a script's inner calls and MULTI/EXEC count),
 * Redis CPU (INFO cpu, user + sys of the whole server), Redis command time (commandstats usec; a
 * script's time already includes its inner calls, which are counted again), bridge CPU
 * (/proc/<pid>/stat), the commands with the most calls, and peak RSS (VmHWM) under load.
 * Before the stack starts: client CPU of one platform call through gotTransport vs bare node:http
 * (transport-cost.ts). After it: the same warm-up and load on a bridge with V8's default heap
 * settings (the launcher's bound trades CPU for memory; the row shows both sides).
 * Then LONE events one at a time on the same bridge (the cost of an event that arrives alone).
 * Env: COST_N (5000), COST_WARMUP_N (500), COST_CALLS (2000), COST_LONE_N (300).
 * Prints a table and writes bench/results/cost.json (read by bench/all.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/redis/start-redis-server.js';
import {
  cpuSeconds,
  exitUnlessHarness,
  faults,
  LOAD_HARNESS,
  launcherNodeFlags,
  parseCommandstats,
  parseCpu,
  resetPeakRss,
  round,
  runLoad,
  startBridgeStack,
  statusMb,
  textTable,
} from './peers-support.js';
import { stopChild } from './support.js';
import { runTransportCost, type TransportCost } from './transport-cost.js';

const here = dirname(fileURLToPath(import.meta.url));
const EVENTS = Number(process.env.COST_N ?? 5000);
const WARMUP = Number(process.env.COST_WARMUP_N ?? 500);
const CALLS = Number(process.env.COST_CALLS ?? 2000);
/** Events sent one at a time (-c 1) after the main run: the cost of an event that arrives alone. */
const LONE = Number(process.env.COST_LONE_N ?? 300);
/** Settle time after `start` is ready before idle RSS is read (start-up garbage collected or not). */
const IDLE_SETTLE_MS = 3_000;

export const COST_GOALS = {
  redisCommandsPerEvent: 20,
  redisCpuUsPerEvent: 150,
  bridgeCpuMsPerEvent: 0.8,
  peakRssMb: 150,
  idleRssMb: 110,
} as const;

export interface CostResult {
  date: string;
  loadAtStart: number[];
  events: number;
  warmup: number;
  /** load.mjs figures of the measured run (a sanity check: the bridge must have done the work). */
  load: { actionsPerS: number | null; missing: number; duplicated: number; wrong: number };
  perEvent: {
    redisCommands: number;
    redisCpuUs: number;
    redisCommandUs: number;
    /** Part of redisCommandUs spent in EVAL/EVALSHA/FCALL (inner calls included). */
    redisScriptUs: number;
    bridgeCpuMs: number;
  };
  topCommands: { command: string; perEvent: number; usecPerEvent: number }[];
  peakRssMb: number;
  idleRssMb: number;
  /**
   * The same load on a bridge started with V8's default heap settings (as the shared harness's
   * `node dist/cli.js start` runs it): the other side of the launcher's memory bound.
   */
  defaultHeap?: { bridgeCpuMs: number; peakRssMb: number; actionsPerS: number | null };
  /**
   * The same stack, events sent one at a time (-c 1): each is its own batch and its own BullMQ
   * job, so nothing is shared with other events (a quiet inbox, or an open loop at a low rate).
   */
  lone?: { events: number; bridgeCpuMs: number; redisCommands: number; redisCpuUs: number };
  transport: TransportCost;
  commandstats: Record<string, { calls: number; usec: number }>;
}

export async function runCostBench(): Promise<CostResult> {
  const loadAtStart = loadavg().map((n) => round(n, 2));
  const date = new Date().toISOString();
  // First, before anything of the stack runs: the transport alone.
  const transport = await runTransportCost(CALLS, 16);

  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-cost-'));
  const redis = await startRedisServer({ appendOnly: true });
  const stops: (() => Promise<void>)[] = [() => redis.stop()];
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  stops.push(async () => client.disconnect());
  try {
    await client.connect();
    // As users start it: the bin launcher's V8 settings (npx convo-bridge, the Docker image).
    const { api, bridge } = await startBridgeStack(dir, redis.url, stops, launcherNodeFlags());
    await sleep(IDLE_SETTLE_MS);
    const idleRssMb = await statusMb(bridge.pid, 'VmRSS');

    const common = ['--url', bridge.url, '--api', api.url, '-c', '32', '--timeout', '120'];
    await runLoad([...common, '-n', String(WARMUP), '--settle', '1'], 300_000);

    await resetPeakRss(bridge.pid);
    // --settle 0: the counters stop when the last expected call has arrived, not 2 s of idling later.
    const { run, stats, bridgeCpuS, redisCpuS } = await countedLoad(client, bridge.pid, [
      ...common,
      '-n',
      String(EVENTS),
      '--settle',
      '0',
    ]);
    const peakRssMb = await statusMb(bridge.pid, 'VmHWM');

    const entries = Object.entries(stats);
    const calls = entries.reduce((sum, [, s]) => sum + s.calls, 0);
    const usec = entries.reduce((sum, [, s]) => sum + s.usec, 0);
    const scriptUsec = entries
      .filter(([name]) => /^(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro)$/.test(name))
      .reduce((sum, [, s]) => sum + s.usec, 0);
    const f = faults(run);
    const lone = await measureLone(client, bridge.pid, ['--url', bridge.url, '--api', api.url]);
    // The first bridge would take the second one's jobs off the shared queue: stop it first.
    await stopChild(bridge.child);
    await stopChild(api.child);
    const defaultHeap = await measureDefaultHeap(dir, redis.url, stops);
    return {
      date,
      loadAtStart,
      events: EVENTS,
      warmup: WARMUP,
      load: { actionsPerS: run.actions_per_s ?? null, ...f },
      perEvent: {
        redisCommands: round(calls / EVENTS, 1),
        redisCpuUs: round((redisCpuS * 1e6) / EVENTS, 0),
        redisCommandUs: round(usec / EVENTS, 0),
        redisScriptUs: round(scriptUsec / EVENTS, 0),
        bridgeCpuMs: round((bridgeCpuS * 1000) / EVENTS, 3),
      },
      topCommands: entries
        .sort((a, b) => b[1].calls - a[1].calls)
        .slice(0, 8)
        .map(([command, s]) => ({
          command,
          perEvent: round(s.calls / EVENTS, 2),
          usecPerEvent: round(s.usec / EVENTS, 1),
        })),
      peakRssMb,
      idleRssMb,
      defaultHeap,
      lone,
      transport,
      commandstats: stats,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * One load run between the counters: Redis CPU (INFO cpu), Redis commands (commandstats, reset
 * before and our own CONFIG RESETSTAT left out) and the bridge's CPU (/proc).
 */
async function countedLoad(client: Redis, pid: number, loadArgs: string[]) {
  const redisCpu0 = parseCpu(await client.info('cpu'));
  await client.config('RESETSTAT');
  const bridgeCpu0 = await cpuSeconds(pid);
  const run = await runLoad(loadArgs, 600_000);
  const bridgeCpuS = (await cpuSeconds(pid)) - bridgeCpu0;
  const stats = parseCommandstats(await client.info('commandstats'));
  const redisCpuS = parseCpu(await client.info('cpu')) - redisCpu0;
  delete stats['config|resetstat']; // ours
  return { run, stats, bridgeCpuS, redisCpuS };
}

/** Per-event cost of LONE events sent one at a time (closed loop, 1 in flight). */
async function measureLone(client: Redis, pid: number, target: string[]) {
  const { run, stats, bridgeCpuS, redisCpuS } = await countedLoad(client, pid, [
    ...target,
    '-c',
    '1',
    '-n',
    String(LONE),
    '--timeout',
    '120',
    '--settle',
    '0',
  ]);
  const f = faults(run);
  if (f.missing + f.duplicated + f.wrong > 0) {
    throw new Error(`lone events: missing/duplicated/wrong ${f.missing}/${f.duplicated}/${f.wrong}`);
  }
  const calls = Object.values(stats).reduce((sum, s) => sum + s.calls, 0);
  return {
    events: LONE,
    bridgeCpuMs: round((bridgeCpuS * 1000) / LONE, 3),
    redisCommands: round(calls / LONE, 1),
    redisCpuUs: round((redisCpuS * 1e6) / LONE, 0),
  };
}

/**
 * Bridge CPU and peak RSS per event with V8's default heap settings: a second bridge (and fake API)
 * on the same Redis, the same warm-up and load. V8 then lets the old generation grow about four
 * times past what is live before a full collection, where the launcher's 160 MB bound keeps it
 * near 1.5 times (measured with bench:profile's GC trace).
 */
async function measureDefaultHeap(dir: string, redisUrl: string, stops: (() => Promise<void>)[]) {
  const { api, bridge } = await startBridgeStack(dir, redisUrl, stops, []);
  const common = ['--url', bridge.url, '--api', api.url, '-c', '32', '--timeout', '120'];
  await runLoad([...common, '-n', String(WARMUP), '--settle', '1'], 300_000);
  const cpu0 = await cpuSeconds(bridge.pid);
  await resetPeakRss(bridge.pid);
  const run = await runLoad([...common, '-n', String(EVENTS), '--settle', '0'], 600_000);
  const cpu1 = await cpuSeconds(bridge.pid);
  return {
    bridgeCpuMs: round(((cpu1 - cpu0) * 1000) / EVENTS, 3),
    peakRssMb: await statusMb(bridge.pid, 'VmHWM'),
    actionsPerS: run.actions_per_s ?? null,
  };
}

const yes = (ok: boolean) => (ok ? 'yes' : 'NO');

/** Rows (measure, value, goal, met) for this table and bench/all.ts's. */
export function costRows(r: CostResult): { measure: string; value: string; goal: string; met: string }[] {
  const g = COST_GOALS;
  const p = r.perEvent;
  const t = r.transport;
  return [
    {
      measure: 'Redis commands per event (commandstats; script inner calls included)',
      value: String(p.redisCommands),
      goal: `<= ${g.redisCommandsPerEvent}`,
      met: yes(p.redisCommands <= g.redisCommandsPerEvent),
    },
    {
      measure: 'Redis CPU per event (INFO cpu, user + sys)',
      value: `${p.redisCpuUs} us`,
      goal: `<= ${g.redisCpuUsPerEvent} us`,
      met: yes(p.redisCpuUs <= g.redisCpuUsPerEvent),
    },
    {
      measure: 'Redis command time per event (commandstats usec; of it in scripts)',
      value: `${p.redisCommandUs} us (${p.redisScriptUs} us)`,
      goal: '-',
      met: '-',
    },
    {
      measure: 'bridge CPU per event (start, /proc utime + stime)',
      value: `${p.bridgeCpuMs} ms`,
      goal: `<= ${g.bridgeCpuMsPerEvent} ms`,
      met: yes(p.bridgeCpuMs <= g.bridgeCpuMsPerEvent),
    },
    {
      measure: 'top Redis commands, calls per event',
      value: r.topCommands.map((c) => `${c.command} ${c.perEvent}`).join(', '),
      goal: '-',
      met: '-',
    },
    {
      measure: `peak RSS of start under load (VmHWM, ${r.events} events, 32 in flight; node ${launcherNodeFlags().join(' ')})`,
      value: `${r.peakRssMb} MB`,
      goal: `<= ${g.peakRssMb} MB`,
      met: yes(r.peakRssMb <= g.peakRssMb),
    },
    {
      measure: 'idle RSS of start (ready, before load)',
      value: `${r.idleRssMb} MB`,
      goal: `<= ${g.idleRssMb} MB`,
      met: yes(r.idleRssMb <= g.idleRssMb),
    },
    ...(r.defaultHeap
      ? [
          {
            measure:
              'the same with V8 default heap settings (node dist/cli.js, as the shared harness runs it): bridge CPU, peak RSS',
            value: `${r.defaultHeap.bridgeCpuMs} ms, ${r.defaultHeap.peakRssMb} MB (${r.defaultHeap.actionsPerS} actions/s)`,
            goal: '-',
            met: '-',
          },
        ]
      : []),
    ...(r.lone
      ? [
          {
            measure: `events sent one at a time (${r.lone.events}, 1 in flight; each its own batch and BullMQ job): bridge CPU, Redis commands, Redis CPU per event`,
            value: `${r.lone.bridgeCpuMs} ms, ${r.lone.redisCommands}, ${r.lone.redisCpuUs} us`,
            goal: '-',
            met: '-',
          },
        ]
      : []),
    {
      measure: `client CPU per platform call: gotTransport vs bare node:http (${t.calls} calls, ${t.inFlight} in flight)`,
      value: `${t.gotCpuUsPerCall} vs ${t.bareCpuUsPerCall} us = ${t.ratio}x`,
      goal: '-',
      met: '-',
    },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  exitUnlessHarness('bench:cost', LOAD_HARNESS);
  const result = await runCostBench();
  const l = result.load;
  console.log(
    `cost per event, ${result.events} events after ${result.warmup} warm-up, load average at start ${result.loadAtStart.join(' ')}; ` +
      `the run: ${l.actionsPerS} actions/s, missing/dup/wrong ${l.missing}/${l.duplicated}/${l.wrong}`,
  );
  console.log(
    textTable([
      ['measure', 'measured', 'goal', 'met'],
      ...costRows(result).map((row) => [row.measure, row.value, row.goal, row.met]),
    ]),
  );
  await mkdir(join(here, 'results'), { recursive: true });
  await writeFile(join(here, 'results', 'cost.json'), `${JSON.stringify(result, null, 2)}\n`);
}
