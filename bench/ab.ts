/**
 * `npm run bench:ab -- <git ref>`: is this checkout cheaper per event than <ref>? Both builds run
 * SIDE BY SIDE in one run, each with its own private redis-server (append-only file on), fake
 * platform API and load generator, the loads at the same time, so that the machine's drift (this
 * VM's speed moves by 15-20% within minutes, more than most single changes) hits both alike. A
 * sequential before/after on such a machine measures the machine; this measures the change.
 *
 * The base is built from <ref> in a temporary git worktree (this checkout's node_modules); the
 * candidate is this checkout's dist/ (`npm run bench:ab` builds it first). Each round sends
 * AB_N (4000) webhooks to each bridge, 32 in flight (or AB_RATE events/s, an open loop), after a
 * warm-up; per round and bridge: CPU per event (/proc/<pid>/stat), Redis CPU and Redis
 * commands per event (INFO cpu, INFO commandstats), actions/s and missing/duplicated/wrong. Prints
 * the rounds and the medians of the candidate/base ratios; writes bench/results/ab.json.
 *
 * Every round starts both stacks afresh (in turn base first and candidate first) and warms them
 * up with AB_WARMUP_N (500) events. Where the scheduler places the ten processes on two cores can
 * favour one side for as long as they live: a run of one build against itself on long-lived
 * stacks measured x1.13 in each of its 6 rounds. Pinning each side to a core made it worse (each
 * side then suffers its vCPU's own stalls: rounds from x0.59 to x1.33). Fresh stacks turn that
 * bias into round-to-round scatter, which the median over rounds averages out; take 8+ rounds
 * before believing a 5% change.
 *
 * Env: AB_ROUNDS (4), AB_N (4000), AB_WARMUP_N (500), AB_RATE (closed loop when unset), AB_DUP
 * (0), AB_NODE_FLAGS (V8 flags of both; default the bin launcher's), AB_NODE_FLAGS_BASE (the base's only, e.g. to
 * compare heap settings on one build with `npm run bench:ab -- HEAD`).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { findFreePort, startRedisServer } from '../src/redis/start-redis-server.js';
import {
  CLI,
  cpuSeconds,
  exitUnlessHarness,
  faults,
  LOAD_HARNESS,
  type LoadResult,
  launcherNodeFlags,
  PROJECT_ROOT,
  parseCommandstats,
  parseCpu,
  round,
  runLoad,
  startFakeApi,
  startHarnessBridge,
  textTable,
  writeLoopbackBridgeConfig,
} from './peers-support.js';
import { stopChild } from './support.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const EVENTS = Number(process.env.AB_N ?? 4000);
const WARMUP = Number(process.env.AB_WARMUP_N ?? 500);
const RATE = process.env.AB_RATE;
const DUP = process.env.AB_DUP;
const flagsOf = (value: string | undefined) =>
  value === undefined ? launcherNodeFlags() : value.split(' ').filter(Boolean);

interface Counters {
  cpuS: number;
  redisCpuS: number;
  redisCalls: number;
}

async function counters(pid: number, redis: Redis): Promise<Counters> {
  const calls = Object.values(parseCommandstats(await redis.info('commandstats'))).reduce(
    (a, c) => a + c.calls,
    0,
  );
  return { cpuS: await cpuSeconds(pid), redisCpuS: parseCpu(await redis.info('cpu')), redisCalls: calls };
}

/** Builds `ref` into a temporary worktree; returns its CLI and a cleanup. */
async function buildBase(ref: string): Promise<{ cli: string; commit: string; remove: () => Promise<void> }> {
  const { stdout } = await run('git', ['rev-parse', '--verify', `${ref}^{commit}`], {
    cwd: PROJECT_ROOT,
  }).catch((error: unknown) => {
    throw new Error(
      `bench:ab: "${ref}" is not a commit of this repository (git rev-parse: ${String(error)})`,
      {
        cause: error,
      },
    );
  });
  const commit = stdout.trim();
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-ab-'));
  const tree = join(dir, 'tree');
  await run('git', ['worktree', 'add', '--detach', tree, commit], { cwd: PROJECT_ROOT });
  const remove = async () => {
    await run('git', ['worktree', 'remove', '--force', tree], { cwd: PROJECT_ROOT }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    await run(
      process.execPath,
      [join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: tree,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (error) {
    await remove();
    throw new Error(`bench:ab: building ${ref} (${commit.slice(0, 7)}) failed: ${String(error)}`, {
      cause: error,
    });
  }
  return { cli: join(tree, 'dist', 'cli.js'), commit, remove };
}

interface Side {
  name: string;
  api: Awaited<ReturnType<typeof startFakeApi>>;
  bridge: Awaited<ReturnType<typeof startHarnessBridge>>;
  redis: Redis;
  stop: () => Promise<void>;
}

/** One side's stack: a private Redis (append-only file on), a fake API and the bridge. */
async function startSide(name: string, cli: string, flags: string[], config: string): Promise<Side> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const server = await startRedisServer({ appendOnly: true });
    stops.push(() => server.stop());
    const api = await startFakeApi(await findFreePort());
    stops.push(() => stopChild(api.child));
    const bridge = await startHarnessBridge({
      config,
      fakeApiUrl: api.url,
      redisUrl: server.url,
      port: await findFreePort(),
      nodeArgs: flags,
      cli,
    });
    stops.push(() => stopChild(bridge.child));
    const redis = new Redis(server.url);
    stops.push(async () => {
      redis.disconnect();
    });
    return { name, api, bridge, redis, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function main() {
  exitUnlessHarness('bench:ab', LOAD_HARNESS);
  const ref = process.argv[2];
  if (!ref) throw new Error('usage: npm run bench:ab -- <git ref of the base, e.g. HEAD or main~1>');
  const base = await buildBase(ref);
  const stops: (() => Promise<void>)[] = [base.remove];
  const work = await mkdtemp(join(tmpdir(), 'convo-bridge-ab-run-'));
  stops.push(() => rm(work, { recursive: true, force: true }));
  try {
    const config = await writeLoopbackBridgeConfig(work);
    const specs = [
      {
        name: 'base',
        cli: base.cli,
        flags: flagsOf(process.env.AB_NODE_FLAGS_BASE ?? process.env.AB_NODE_FLAGS),
      },
      { name: 'candidate', cli: CLI, flags: flagsOf(process.env.AB_NODE_FLAGS) },
    ];
    const load = (side: Side, n: number, warmup: boolean): Promise<LoadResult> =>
      runLoad(
        [
          ...['--url', side.bridge.url, '--api', side.api.url, '--timeout', '120', '--settle', '0'],
          ...(RATE && !warmup ? ['--rate', RATE] : ['-c', '32']),
          ...(DUP && !warmup ? ['--dup', DUP] : []),
          ...['-n', String(n)],
        ],
        600_000,
      );
    const startLoad = loadavg().map((l) => round(l));
    interface SideRound {
      side: string;
      cpuMs: number;
      redisCpuUs: number;
      redisCommands: number;
      actionsPerS: number | null;
      missing: number;
      duplicated: number;
      wrong: number;
    }
    const rounds: { round: number; base: SideRound; candidate: SideRound }[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      // Fresh processes every round, started in turn base-first and candidate-first: where the
      // scheduler puts them favours one side for as long as they live (see the header).
      const order = r % 2 === 1 ? specs : [...specs].reverse();
      const started: Side[] = [];
      try {
        for (const spec of order) started.push(await startSide(spec.name, spec.cli, spec.flags, config));
        const sides = specs.map((spec) => started.find((s) => s.name === spec.name) as Side);
        await Promise.all(sides.map((side) => load(side, WARMUP, true)));
        const before = await Promise.all(sides.map((s) => counters(s.bridge.pid, s.redis)));
        const results = await Promise.all(sides.map((s) => load(s, EVENTS, false)));
        const after = await Promise.all(sides.map((s) => counters(s.bridge.pid, s.redis)));
        const per = sides.map((s, i): SideRound => {
          const a = after[i] as Counters;
          const b = before[i] as Counters;
          const result = results[i] as LoadResult;
          return {
            side: s.name,
            cpuMs: round(((a.cpuS - b.cpuS) * 1000) / EVENTS, 3),
            redisCpuUs: round(((a.redisCpuS - b.redisCpuS) * 1e6) / EVENTS, 0),
            // The two INFO calls of `counters` are in the difference; leave them out.
            redisCommands: round((a.redisCalls - b.redisCalls - 2) / EVENTS, 2),
            actionsPerS: result.actions_per_s ?? null,
            ...faults(result),
          };
        });
        const [b, c] = per as [SideRound, SideRound];
        rounds.push({ round: r, base: b, candidate: c });
        process.stdout.write(
          `round ${r}/${ROUNDS} (${order[0]?.name} started first): bridge CPU ${b.cpuMs} -> ${c.cpuMs} ms/event (x${round(c.cpuMs / b.cpuMs, 3)}), Redis CPU ${b.redisCpuUs} -> ${c.redisCpuUs} us, commands ${b.redisCommands} -> ${c.redisCommands}\n`,
        );
      } finally {
        for (const side of started) await side.stop();
      }
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((x, y) => x - y);
      const mid = Math.floor(s.length / 2);
      return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
    };
    const ratios = (pick: (p: SideRound) => number) => rounds.map((r) => pick(r.candidate) / pick(r.base));
    const rows = [
      ['measure (candidate / base, per round)', 'median', 'range'],
      ...(
        [
          ['bridge CPU per event', ratios((p) => p.cpuMs)],
          ['Redis CPU per event', ratios((p) => p.redisCpuUs)],
          ['Redis commands per event', ratios((p) => p.redisCommands)],
        ] as const
      ).map(([name, xs]) => [
        name,
        `x${round(median([...xs]), 3)}`,
        `${round(Math.min(...xs), 3)}-${round(Math.max(...xs), 3)}`,
      ]),
    ];
    const faultsTotal = rounds
      .flatMap((r) => [r.base, r.candidate])
      .reduce((a, p) => a + p.missing + p.duplicated + p.wrong, 0);
    process.stdout.write(
      `\nbench:ab, base ${ref} (${base.commit.slice(0, 7)}) vs this checkout, side by side: ${ROUNDS} rounds of ${EVENTS} events each, ${RATE ? `open loop ${RATE}/s` : '32 in flight'}${DUP ? `, dup ${DUP}` : ''}; load at start ${startLoad.join(' ')}\n` +
        `${textTable(rows)}\nmissing/duplicated/wrong in all rounds, both bridges: ${faultsTotal}\n`,
    );
    const out = join(here, 'results', 'ab.json');
    await mkdir(dirname(out), { recursive: true });
    await writeFile(
      out,
      `${JSON.stringify({ date: new Date().toISOString(), base: { ref, commit: base.commit }, events: EVENTS, rate: RATE ?? null, dup: DUP ?? null, loadAtStart: startLoad, rounds }, null, 2)}\n`,
    );
    if (faultsTotal > 0) process.exitCode = 1;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
}

await main();
