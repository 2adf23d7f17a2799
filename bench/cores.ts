/**
 * `npm run bench:cores` (issue 11): where the machine's cores go while the shared harness's load
 * runs, for Node-RED 4 and the bridge, and what that leaves for the ratio goal. Per target, fresh:
 * the harness's fake API, the target (Node-RED with the harness's flow through run-node-red.sh; the
 * bridge as `node dist/cli.js start` with V8's defaults and the harness's bridge.yaml, on a private
 * redis-server with the append-only file on, as bench-matrix.sh's `bridge` target starts it), a
 * warm-up, then REPS runs of load.mjs (-n N -c C) per dup rate. Around each run it reads /proc:
 * the machine's busy time (/proc/stat), and the CPU of the target process, of its MAIN THREAD
 * (/proc/<pid>/task/<pid>/stat: the JavaScript thread; GC helpers and libuv's pool are the rest),
 * of the bridge's Redis, of the fake API, and the load generator's own figure. It prints per run
 * what bounds the target (its main thread busy >= 90% of the run, or the machine >= 90% of all its
 * cores), then the arithmetic of the goal: for RATIO x Node-RED's events/s, how much CPU per event
 * the bridge and its Redis may use in all (the cores minus what the fake API and the load
 * generator use at that rate) and on the bridge's main thread, against what they use.
 *
 * Env: N (5000), C (32), REPS (2), DUPS ("0 0.1"), WARMUP_N (500), RATIO (1.5), PEERS_DIR
 * (/tmp/peers; Node-RED is installed there with npm when missing, not a dependency of this
 * project). Every port is a free one. Saves bench/results/cores.json. Exits non-zero only when a
 * run fails, never for a missed goal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findFreePort, startRedisServer } from '../src/redis/start-redis-server.js';
import { CannotRun, ensureNodeRed, PEERS_DIR, refuseIfPeersRunning } from './peers-install.js';
import {
  cpuSeconds,
  exitUnlessHarness,
  faults,
  HARNESS_DIR,
  LOAD_HARNESS,
  PROJECT_ROOT,
  round,
  runLoad,
  startFakeApi,
  startHarnessBridge,
  textTable,
  writeLoopbackBridgeConfig,
} from './peers-support.js';
import { stopChild } from './support.js';

const N = Number(process.env.N ?? 5000);
const C = process.env.C ?? '32';
const REPS = Number(process.env.REPS ?? 2);
const DUPS = (process.env.DUPS ?? '0 0.1').split(/\s+/).filter(Boolean);
const WARMUP = process.env.WARMUP_N ?? '500';
const RATIO = Number(process.env.RATIO ?? 1.5);
const CORES = cpus().length;
/** Busy share (of one thread, or of every core) from which that resource counts as the bound. */
const BOUND_SHARE = 0.9;

/** utime + stime of one thread of `pid` (the main thread's id is the process id), in seconds. */
function threadSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Busy and total jiffies of the whole machine (all cores). */
function machineJiffies(): { busy: number; total: number } {
  const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const values = first.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

interface Processes {
  target: number;
  redis?: number;
  api: number;
}

interface Sample {
  at: number;
  machine: { busy: number; total: number };
  target: number;
  main: number;
  redis: number;
  api: number;
}

async function sample(p: Processes): Promise<Sample> {
  return {
    at: performance.now(),
    machine: machineJiffies(),
    target: await cpuSeconds(p.target),
    main: threadSeconds(p.target, p.target),
    redis: p.redis === undefined ? 0 : await cpuSeconds(p.redis),
    api: await cpuSeconds(p.api),
  };
}

export interface CoresRow {
  target: string;
  dup: number;
  rep: number;
  eventsPerS: number | null;
  actionsPerS: number | null;
  /** Cores busy on the whole machine during the run (of CORES). */
  machineCores: number;
  /** Share of the run the target's main thread was on a core. */
  mainThreadBusy: number;
  /** CPU per unique event, ms. */
  ms: { target: number; mainThread: number; redis: number | null; fakeApi: number; loadGenerator: number };
  bound: string;
  missing: number;
  duplicated: number;
  wrong: number;
}

function rowOf(
  target: string,
  dup: number,
  rep: number,
  before: Sample,
  after: Sample,
  run: Awaited<ReturnType<typeof runLoad>>,
  withRedis: boolean,
): CoresRow {
  const wallS = (after.at - before.at) / 1000;
  const jiffies = after.machine.total - before.machine.total;
  const machineCores = jiffies > 0 ? (CORES * (after.machine.busy - before.machine.busy)) / jiffies : 0;
  const perEvent = (seconds: number) => round((seconds * 1000) / N, 3);
  const mainThreadBusy = (after.main - before.main) / wallS;
  const f = faults(run);
  const bound =
    mainThreadBusy >= BOUND_SHARE
      ? 'its main thread'
      : machineCores >= BOUND_SHARE * CORES
        ? 'the machine'
        : 'neither (waits)';
  return {
    target,
    dup,
    rep,
    eventsPerS: run.all_done_wall_s ? round(N / run.all_done_wall_s, 1) : null,
    actionsPerS: run.actions_per_s ?? null,
    machineCores: round(machineCores, 2),
    mainThreadBusy: round(mainThreadBusy, 2),
    ms: {
      target: perEvent(after.target - before.target),
      mainThread: perEvent(after.main - before.main),
      redis: withRedis ? perEvent(after.redis - before.redis) : null,
      fakeApi: perEvent(after.api - before.api),
      loadGenerator: perEvent(run.loadgen_cpu_s ?? 0),
    },
    bound,
    missing: f.missing,
    duplicated: f.duplicated,
    wrong: f.wrong,
  };
}

/** run-node-red.sh start|stop with our ports; resolves with its exit code. */
function nodeRedScript(action: 'start' | 'stop', env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn('bash', [join(HARNESS_DIR, 'run-node-red.sh'), action], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 2],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });
}

/** One target, fresh: its stack, a warm-up, REPS runs per dup rate; stops everything it started. */
async function measureTarget(target: 'node-red' | 'bridge', dir: string): Promise<CoresRow[]> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const api = await startFakeApi(await findFreePort());
    stops.push(() => stopChild(api.child));
    let url: string;
    const processes: Processes = { target: 0, api: api.child.pid ?? 0 };
    if (target === 'bridge') {
      const redis = await startRedisServer({ appendOnly: true, dir: await mkdtemp(join(dir, 'redis-')) });
      stops.push(() => redis.stop());
      const probe = new Redis(redis.url);
      processes.redis = Number(/process_id:(\d+)/.exec(await probe.info('server'))?.[1]);
      probe.disconnect();
      // V8's defaults, as bench-matrix.sh starts it (`node dist/cli.js start`).
      const bridge = await startHarnessBridge({
        config: await writeLoopbackBridgeConfig(dir),
        fakeApiUrl: api.url,
        redisUrl: redis.url,
        port: await findFreePort(),
      });
      stops.push(() => stopChild(bridge.child));
      processes.target = bridge.pid;
      url = bridge.url;
    } else {
      const port = await findFreePort();
      const env = { NODE_RED_PORT: String(port), FAKE_API: api.url, PEERS_DIR };
      stops.push(async () => {
        await nodeRedScript('stop', env);
      });
      if ((await nodeRedScript('start', env)) !== 0)
        throw new Error('run-node-red.sh could not start Node-RED');
      processes.target = Number(
        (await readFile(join(PEERS_DIR, 'node-red', 'data', 'node-red.pid'), 'utf8')).trim(),
      );
      url = `http://127.0.0.1:${port}/webhook`;
    }
    const common = ['--url', url, '--api', api.url, '-c', C, '--timeout', '120'];
    await runLoad([...common, '-n', WARMUP, '--settle', '1'], 300_000);
    const rows: CoresRow[] = [];
    for (const dup of DUPS) {
      for (let rep = 1; rep <= REPS; rep += 1) {
        const before = await sample(processes);
        const run = await runLoad([...common, '-n', String(N), '--dup', dup, '--settle', '0'], 600_000);
        const after = await sample(processes);
        const row = rowOf(target, Number(dup), rep, before, after, run, processes.redis !== undefined);
        process.stderr.write(`   ${target} dup=${dup} #${rep}: ${JSON.stringify(row)}\n`);
        rows.push(row);
      }
    }
    return rows;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

const median = (xs: number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? (v[m] ?? 0) : ((v[m - 1] ?? 0) + (v[m] ?? 0)) / 2;
};

/** The goal's arithmetic for one dup rate, from the medians of both targets' runs. */
function budget(rows: CoresRow[], dup: number) {
  const of = (target: string) => rows.filter((r) => r.target === target && r.dup === dup);
  const red = of('node-red');
  const bridge = of('bridge');
  if (red.length === 0 || bridge.length === 0) return undefined;
  const m = (list: CoresRow[], pick: (r: CoresRow) => number | null) =>
    median(list.map(pick).filter((x): x is number => x !== null));
  const redEventsPerS = m(red, (r) => r.eventsPerS);
  const wanted = RATIO * redEventsPerS;
  // What the harness itself costs per event at the bridge's side (fake API + load generator).
  const harnessMs = m(bridge, (r) => r.ms.fakeApi) + m(bridge, (r) => r.ms.loadGenerator);
  const allMs = (1000 * CORES) / wanted;
  return {
    dup,
    nodeRedEventsPerS: round(redEventsPerS, 1),
    bridgeEventsPerS: round(
      m(bridge, (r) => r.eventsPerS),
      1,
    ),
    wantedEventsPerS: round(wanted, 1),
    harnessMsPerEvent: round(harnessMs, 3),
    budgetBridgeAndRedisMs: round(allMs - harnessMs, 3),
    usedBridgeAndRedisMs: round(m(bridge, (r) => r.ms.target) + m(bridge, (r) => r.ms.redis), 3),
    budgetMainThreadMs: round(1000 / wanted, 3),
    usedMainThreadMs: round(
      m(bridge, (r) => r.ms.mainThread),
      3,
    ),
  };
}

async function main(): Promise<number> {
  exitUnlessHarness('bench:cores', [...LOAD_HARNESS, 'run-node-red.sh']);
  const loadAtStart = loadavg().map((n) => round(n, 2));
  const startedAt = new Date().toISOString();
  await refuseIfPeersRunning();
  await ensureNodeRed();
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-cores-'));
  try {
    const rows = [...(await measureTarget('node-red', dir)), ...(await measureTarget('bridge', dir))];
    const cpuModel = cpus()[0]?.model ?? '?';
    console.log(
      `\nwhere the cores go, N=${N} C=${C} REPS=${REPS}, ${CORES} cores (${cpuModel}), Node ${process.version}, load at start ${loadAtStart.join(' ')}`,
    );
    console.log(
      textTable([
        [
          'target',
          'dup',
          'run',
          'events/s',
          'actions/s',
          'machine cores busy',
          'main thread busy',
          'ms/event: target',
          'its main thread',
          'its Redis',
          'fake API',
          'load gen',
          'bound by',
          'missing/dup/wrong',
        ],
        ...rows.map((r) => [
          r.target,
          String(r.dup),
          String(r.rep),
          String(r.eventsPerS ?? '-'),
          String(r.actionsPerS ?? '-'),
          `${r.machineCores} of ${CORES}`,
          `${Math.round(r.mainThreadBusy * 100)}%`,
          String(r.ms.target),
          String(r.ms.mainThread),
          r.ms.redis === null ? '-' : String(r.ms.redis),
          String(r.ms.fakeApi),
          String(r.ms.loadGenerator),
          r.bound,
          `${r.missing}/${r.duplicated}/${r.wrong}`,
        ]),
      ]),
    );
    const budgets = DUPS.map((d) => budget(rows, Number(d))).filter((b) => b !== undefined);
    for (const b of budgets) {
      console.log(
        `\ndup ${b.dup}: ${RATIO}x Node-RED's ${b.nodeRedEventsPerS} events/s is ${b.wantedEventsPerS} events/s (the bridge did ${b.bridgeEventsPerS}). ` +
          `At that rate ${CORES} cores give ${round((1000 * CORES) / b.wantedEventsPerS, 3)} ms per event; the fake API and the load generator take ${b.harnessMsPerEvent} ms of it, ` +
          `which leaves the bridge and its Redis ${b.budgetBridgeAndRedisMs} ms (they use ${b.usedBridgeAndRedisMs} ms), ` +
          `and one thread gives ${b.budgetMainThreadMs} ms per event (the bridge's main thread uses ${b.usedMainThreadMs} ms).`,
      );
    }
    await mkdir(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
    await writeFile(
      join(PROJECT_ROOT, 'bench', 'results', 'cores.json'),
      `${JSON.stringify({ date: startedAt, loadAtStart, cpuModel, cores: CORES, node: process.version, params: { N, C: Number(C), REPS, DUPS, RATIO }, rows, budgets }, null, 2)}\n`,
    );
    return 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof CannotRun ? `bench:cores: ${error.message}` : error);
  process.exitCode = error instanceof CannotRun ? 2 : 1;
}
