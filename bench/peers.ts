/**
 * `npm run bench:peers` (issue 11): the shared side-by-side harness (`../shared/peers`, used as it
 * is) against Node-RED 4 and the built bridge in one run, then one table per target and dup rate
 * with the bridge's actions/s as a multiple of Node-RED's, each goal beside its figure; then the
 * bridge alone at an open-loop 200 events/s (bench/peers-rate.ts). Saves bench/results/peers.json.
 *
 * Env (harness defaults): N (5000) C (32) REPS (2) DUPS ("0 0.1"); PEERS_REF=1 adds the harness's
 * hand-written reference bridge; PEERS_DIR (/tmp/peers) holds Node-RED, installed there with npm
 * (`node-red@4`, not a dependency of this project) when missing; FAKE_API_PORT (4000),
 * BRIDGE_REDIS_PORT (6390), NODE_RED_PORT (1880): a free port is chosen when the default is taken
 * and the variable is not set; PEERS_RATE=0 skips the open-loop run (see peers-rate.ts for its env);
 * PEERS_TIMEOUT_S (3600) bounds the whole harness run.
 * Exits non-zero only when the harness (or a run of this script's own) fails, never for a missed goal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../src/shared/start-redis-server.js';
import { waitFor } from '../src/shared/wait-for.js';
import { OPEN_LOOP_P99_GOAL_MS, type OpenLoopResult, openLoopLine, runOpenLoop } from './peers-rate.js';
import {
  faults,
  HARNESS_DIR,
  type LoadResult,
  PROJECT_ROOT,
  parseLoadResult,
  portIsFree,
  round,
  textTable,
  writeLoopbackBridgeConfig,
} from './peers-support.js';

const N = process.env.N ?? '5000';
const C = process.env.C ?? '32';
const REPS = process.env.REPS ?? '2';
const DUPS = process.env.DUPS ?? '0 0.1';
const PEERS_DIR = process.env.PEERS_DIR ?? '/tmp/peers';
const TARGETS = [...(process.env.PEERS_REF === '1' ? ['ref'] : []), 'node-red', 'bridge'];
/** Ports bench-matrix.sh hard-codes (not configurable there): they must be free. */
const FIXED_PORTS: Record<string, number> = { bridge: 3910, ref: 3901 };
const RATIO_GOAL = 1.5;
const HARNESS_TIMEOUT_MS = Number(process.env.PEERS_TIMEOUT_S ?? 3600) * 1000;

/** Exit code 2: the harness cannot run here as things are (a port or a peer is taken). */
class CannotRun extends Error {}

async function choosePort(name: string, fallback: number): Promise<string> {
  const set = process.env[name];
  if (set) return set;
  if (await portIsFree(fallback)) return String(fallback);
  const port = await findFreePort();
  process.stderr.write(`${name}: ${fallback} is taken, using ${port}\n`);
  return String(port);
}

/** A peer started from PEERS_DIR by someone else would be stopped by the harness's exit trap. */
async function refuseIfPeersRunning() {
  const files = [join(PEERS_DIR, 'node-red', 'data', 'node-red.pid'), join(PEERS_DIR, 'n8n', 'n8n.pid')];
  for (const file of files) {
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (!pid) continue;
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (alive) {
      throw new CannotRun(
        `${file} names a running process (${pid}): bench-matrix.sh stops that peer when it exits, so it is ` +
          'not started while another run uses it; wait for that run, or set PEERS_DIR to another folder',
      );
    }
  }
}

/** Installs node-red@4 into PEERS_DIR/node-red when missing (bounded: 15 minutes). */
async function ensureNodeRed() {
  const folder = join(PEERS_DIR, 'node-red');
  if (existsSync(join(folder, 'node_modules', 'node-red', 'red.js'))) return;
  process.stderr.write(`Node-RED is not installed under ${folder}: installing node-red@4 there with npm\n`);
  await mkdir(folder, { recursive: true });
  // Its own package.json, so npm installs here and never into a project above this folder.
  if (!existsSync(join(folder, 'package.json'))) {
    await writeFile(join(folder, 'package.json'), '{ "private": true }\n');
  }
  await runToEnd(
    'npm',
    ['install', '--no-audit', '--no-fund', 'node-red@4'],
    { cwd: folder, env: process.env },
    15 * 60_000,
    'npm install node-red@4',
  );
}

/** PIDs of every live descendant of `root` (from /proc), children before grandchildren. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * Runs a command to its end with its output on our stderr, in its own process group so that a
 * timeout or our own SIGINT/SIGTERM stops it and everything it started (the harness's exit trap
 * then stops its fake API, Redis, bridge and Node-RED by PID).
 */
function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
  timeoutMs: number,
  what: string,
): Promise<{ code: number; pid: number | undefined; interrupted: boolean }> {
  return new Promise((resolveRun, reject) => {
    const child: ChildProcess = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 2, 2] });
    const stopGroup = () => {
      if (child.pid === undefined || child.exitCode !== null) return;
      // `timeout` (bench-matrix.sh wraps load.mjs in it) moves itself into a process group of its
      // own, so the group signal misses it: its PID, like every descendant's, is taken first.
      for (const pid of [-child.pid, ...descendants(child.pid)]) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };
    let interrupted = false;
    const onSignal = () => {
      interrupted = true;
      stopGroup();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const timer = setTimeout(() => {
      process.stderr.write(`${what}: still running after ${timeoutMs / 1000} s, stopping it\n`);
      stopGroup();
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolveRun({ code: code ?? (signal ? 128 : 1), pid: child.pid, interrupted });
    });
  });
}

const median = (xs: number[]): number | null => {
  const v = [...xs].sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length >> 1;
  return v.length % 2 ? (v[m] ?? null) : round(((v[m - 1] ?? 0) + (v[m] ?? 0)) / 2, 2);
};
const numbers = (xs: (number | null | undefined)[]) => xs.filter((x): x is number => typeof x === 'number');

export interface PeerRow {
  target: string;
  dup: number;
  runs: number;
  /** Medians across REPS; actions/s and all-done are null in a run with missing calls. */
  actionsPerS: number | null;
  allDoneS: number | null;
  e2eP99Ms: number | null;
  /** peer.cpu_s (process tree, whole run incl. drain and settle) / unique events, in ms. */
  cpuMsPerEvent: number | null;
  rssMaxMb: number | null;
  /** Sums over the runs. */
  missing: number;
  duplicated: number;
  wrong: number;
}

function summarise(results: LoadResult[]): PeerRow[] {
  const groups = new Map<string, LoadResult[]>();
  for (const r of results) {
    const key = r.label ?? '?';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups].map(([label, runs]) => {
    const [target = label, dup = '?'] = /^(\S+) dup=(\S+)$/.exec(label)?.slice(1) ?? [];
    const sums = runs.map(faults).reduce(
      (a, f) => ({
        missing: a.missing + f.missing,
        duplicated: a.duplicated + f.duplicated,
        wrong: a.wrong + f.wrong,
      }),
      { missing: 0, duplicated: 0, wrong: 0 },
    );
    const rss = numbers(runs.map((r) => r.peer?.rss_max_mb));
    return {
      target,
      dup: Number(dup),
      runs: runs.length,
      actionsPerS: median(numbers(runs.map((r) => r.actions_per_s))),
      allDoneS: median(numbers(runs.map((r) => r.all_done_wall_s))),
      e2eP99Ms: median(numbers(runs.map((r) => r.e2e_p99_ms))),
      cpuMsPerEvent: median(numbers(runs.map((r) => (r.peer ? (r.peer.cpu_s * 1000) / r.n : undefined)))),
      rssMaxMb: rss.length ? Math.max(...rss) : null,
      ...sums,
    };
  });
}

interface Goal {
  measure: string;
  value: string;
  goal: string;
  met: string;
}

function goals(rows: PeerRow[], openLoop: OpenLoopResult | undefined): Goal[] {
  const out: Goal[] = [];
  for (const dup of [...new Set(rows.map((r) => r.dup))]) {
    const bridge = rows.find((r) => r.target === 'bridge' && r.dup === dup);
    const red = rows.find((r) => r.target === 'node-red' && r.dup === dup);
    if (!bridge || !red) continue;
    const clean = bridge.missing + bridge.duplicated + bridge.wrong === 0;
    const ratio =
      bridge.actionsPerS !== null && red.actionsPerS ? round(bridge.actionsPerS / red.actionsPerS, 2) : null;
    out.push({
      measure: `dup ${dup}: bridge actions/s / Node-RED's`,
      value: `${bridge.actionsPerS ?? '-'} / ${red.actionsPerS ?? '-'} = ${ratio ?? '-'}x, missing/dup/wrong ${bridge.missing}/${bridge.duplicated}/${bridge.wrong}`,
      goal: `>= ${RATIO_GOAL}x, 0/0/0`,
      met: ratio !== null && ratio >= RATIO_GOAL && clean ? 'yes' : 'NO',
    });
    out.push({
      measure: `dup ${dup}: ${N}-burst all done, bridge vs Node-RED`,
      value: `${bridge.allDoneS ?? '-'} s vs ${red.allDoneS ?? '-'} s`,
      goal: "<= Node-RED's",
      met:
        bridge.allDoneS !== null && red.allDoneS !== null && bridge.allDoneS <= red.allDoneS ? 'yes' : 'NO',
    });
  }
  if (openLoop) {
    out.push({
      measure: `bridge alone, open loop ${openLoop.rate}/s (${openLoop.events} events): e2e p99`,
      value: `${openLoop.e2eP99Ms ?? '-'} ms, missing/dup/wrong ${openLoop.missing}/${openLoop.duplicated}/${openLoop.wrong}`,
      goal: `<= ${OPEN_LOOP_P99_GOAL_MS} ms, 0/0/0`,
      met: openLoop.met ? 'yes' : 'NO',
    });
  }
  return out;
}

const cell = (v: number | null | undefined) => (v === null || v === undefined ? '-' : String(v));

async function main(): Promise<number> {
  const loadAtStart = loadavg().map((n) => round(n, 2));
  const startedAt = new Date().toISOString();
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'cli.js'))) {
    throw new CannotRun(`${PROJECT_ROOT}/dist/cli.js is missing: run \`npm run build\` first`);
  }
  for (const target of TARGETS) {
    const port = FIXED_PORTS[target];
    if (port !== undefined && !(await portIsFree(port))) {
      throw new CannotRun(
        `port ${port} is taken; bench-matrix.sh's ${target} target always listens there (another run of the harness?)`,
      );
    }
  }
  await refuseIfPeersRunning();
  await ensureNodeRed();
  const ports = {
    FAKE_API_PORT: await choosePort('FAKE_API_PORT', 4000),
    BRIDGE_REDIS_PORT: await choosePort('BRIDGE_REDIS_PORT', 6390),
    NODE_RED_PORT: await choosePort('NODE_RED_PORT', 1880),
  };
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-peers-'));
  // The harness's own temp folders (its Redis's data dir: `mktemp -d`) go under ours, removed after.
  const harnessTmp = join(dir, 'tmp');
  await mkdir(harnessTmp);
  let keep = false;
  try {
    const out = join(dir, 'peers.jsonl');
    const config = await writeLoopbackBridgeConfig(dir);
    process.stderr.write(
      `bench-matrix.sh N=${N} C=${C} REPS=${REPS} DUPS="${DUPS}" targets ${TARGETS.join(' ')} (${JSON.stringify(ports)})\n`,
    );
    const { code, pid, interrupted } = await runToEnd(
      'bash',
      [join(HARNESS_DIR, 'bench-matrix.sh'), out, ...TARGETS],
      {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          N,
          C,
          REPS,
          DUPS,
          PEERS_DIR,
          ...ports,
          BRIDGE_DIR: PROJECT_ROOT,
          BRIDGE_CONFIG: config,
          TMPDIR: harnessTmp,
        },
      },
      HARNESS_TIMEOUT_MS,
      'bench-matrix.sh',
    );
    // Its exit trap signals its Redis without waiting: let that Redis finish before its dir goes.
    await waitFor(() => portIsFree(Number(ports.BRIDGE_REDIS_PORT)), {
      timeoutMs: 10_000,
      what: `the harness's Redis on port ${ports.BRIDGE_REDIS_PORT} to exit`,
    }).catch(() => undefined);
    // bench-matrix.sh writes these two logs with its own PID ($$) in the name and leaves them.
    const logs = [`/tmp/fake-api.${pid}.log`, `/tmp/bridge.${pid}.log`];
    if (interrupted) {
      for (const log of logs) await rm(log, { force: true });
      process.stderr.write('bench:peers: interrupted; the harness and everything it started were stopped\n');
      return 130;
    }
    if (code !== 0) {
      keep = true;
      process.stderr.write(
        `bench-matrix.sh failed (exit ${code}); kept its logs ${logs.join(', ')} and its results and Redis data under ${dir}\n`,
      );
      return code;
    }
    for (const log of logs) await rm(log, { force: true });
    const lines = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
    const results = lines.map((line, i) => parseLoadResult(line, `${out} line ${i + 1}`));
    const rows = summarise(results);

    const openLoop = process.env.PEERS_RATE === '0' ? undefined : await runOpenLoop();

    const table = textTable([
      [
        'target',
        'dup',
        'runs',
        'actions/s',
        'all done s',
        'e2e p99 ms',
        'CPU ms/event',
        'RSS max MB',
        'missing/dup/wrong',
      ],
      ...rows.map((r) => [
        r.target,
        String(r.dup),
        String(r.runs),
        cell(r.actionsPerS),
        cell(r.allDoneS),
        cell(r.e2eP99Ms),
        cell(r.cpuMsPerEvent === null ? null : round(r.cpuMsPerEvent, 3)),
        cell(r.rssMaxMb),
        `${r.missing}/${r.duplicated}/${r.wrong}`,
      ]),
    ]);
    const goalRows = goals(rows, openLoop);
    const cpuModel = cpus()[0]?.model ?? '?';
    console.log(
      `\npeers side by side, N=${N} C=${C} REPS=${REPS} DUPS="${DUPS}", ${cpus().length} cores (${cpuModel}), ` +
        `Node ${process.version}, load at start ${loadAtStart.join(' ')}`,
    );
    console.log(table);
    console.log(
      '(medians over the runs; missing/dup/wrong summed; CPU = the process tree over the whole run, drain and settle included, per unique event; the bridge figures leave out its Redis)\n',
    );
    console.log(
      textTable([
        ['measure', 'measured', 'goal', 'met'],
        ...goalRows.map((g) => [g.measure, g.value, g.goal, g.met]),
      ]),
    );
    if (openLoop) console.log(`\n${openLoopLine(openLoop)}`);
    await mkdir(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
    await writeFile(
      join(PROJECT_ROOT, 'bench', 'results', 'peers.json'),
      `${JSON.stringify(
        {
          date: startedAt,
          loadAtStart,
          cpuModel,
          cores: cpus().length,
          node: process.version,
          params: { N: Number(N), C: Number(C), REPS: Number(REPS), DUPS, targets: TARGETS },
          rows,
          goals: goalRows,
          openLoop: openLoop ? { ...openLoop, raw: undefined } : null,
          runs: results,
          openLoopRun: openLoop?.raw ?? null,
        },
        null,
        2,
      )}\n`,
    );
    return 0;
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof CannotRun ? `bench:peers: ${error.message}` : error);
  process.exitCode = error instanceof CannotRun ? 2 : 1;
}
