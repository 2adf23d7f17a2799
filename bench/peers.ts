import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../src/base/wait-for.js';
import {
  CannotRun,
  choosePort,
  ensureNodeRed,
  PEERS_DIR,
  refuseIfPeersRunning,
  runToEnd,
} from './peers-install.js';
import { OPEN_LOOP_P99_GOAL_MS, type OpenLoopResult, openLoopLine, runOpenLoop } from './peers-rate.js';
import {
  exitUnlessHarness,
  faults,
  HARNESS_DIR,
  LOAD_HARNESS,
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
const TARGETS = [...(process.env.PEERS_REF === '1' ? ['ref'] : []), 'node-red', 'bridge'];
/** Ports bench-matrix.sh hard-codes (not configurable there): they must be free. */
const FIXED_PORTS: Record<string, number> = { bridge: 3910, ref: 3901 };
const RATIO_GOAL = 1.5;
const HARNESS_TIMEOUT_MS = Number(process.env.PEERS_TIMEOUT_S ?? 3600) * 1000;

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
  exitUnlessHarness('bench:peers', [...LOAD_HARNESS, 'bench-matrix.sh', 'run-node-red.sh', 'summarize.mjs']);
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
