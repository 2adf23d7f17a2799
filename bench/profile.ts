/**
 * `npm run bench:profile` (issue 11: profile before optimising): where the bridge's CPU goes under
 * the harness's load. The same stack as bench:cost (a private redis-server with the append-only
 * file on, the shared harness's fake API, `node dist/cli.js start` with the harness's bridge.yaml),
 * a warm-up of 500 events, then PROFILE_N (5000) events 32 in flight, with V8's CPU profiler and
 * GC trace on. Prints actions/s, bridge CPU per event, peak RSS, the GC counts and pauses, and the
 * bridge's busy CPU by what it was doing (the innermost library or project folder on the stack:
 * got, Node's HTTP client, ioredis, GC, Express...). Writes the profile (Chrome DevTools format)
 * to bench/results/profile/start.cpuprofile.
 *
 * PROFILE_NODE_FLAGS: V8 flags of the bridge instead of the launcher's (e.g. "--max-semi-space-size=8",
 * or "" for V8's defaults, as the shared harness starts it). PROFILE_DUP: --dup of the load.
 * PROFILE_RATE: an open loop at that many events/s (e.g. 200) instead of 32 in flight.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '../src/redis/start-redis-server.js';
import {
  cpuSeconds,
  exitUnlessHarness,
  faults,
  LOAD_HARNESS,
  launcherNodeFlags,
  round,
  runLoad,
  startBridgeStack,
  statusMb,
  textTable,
} from './peers-support.js';
import { stopChild } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const EVENTS = Number(process.env.PROFILE_N ?? 5000);
const WARMUP = 500;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Categories, first match from the innermost frame outwards. */
const CATEGORIES: [string, (url: string, fn: string) => boolean][] = [
  ['V8 garbage collector', (_u, fn) => fn === '(garbage collector)'],
  ['idle', (_u, fn) => fn === '(idle)' || fn === '(program)'],
  [
    'got (and its helpers)',
    (u) =>
      /node_modules\/(got|p-cancelable|@sindresorhus|lowercase-keys|responselike|cacheable|decompress-response|http2-wrapper|agentkeepalive)\//.test(
        u,
      ),
  ],
  ['BullMQ', (u) => /node_modules\/bullmq\//.test(u)],
  [
    'ioredis (commands, socket writes, replies)',
    (u) => /node_modules\/(ioredis|redis-parser|standard-as-callback|denque|cluster-key-slot)\//.test(u),
  ],
  [
    'Express (router, body-parser)',
    (u) =>
      /node_modules\/(express|router|body-parser|raw-body|type-is|content-type|finalhandler|on-finished|iconv-lite|http-errors)\//.test(
        u,
      ),
  ],
  ['zod', (u) => /node_modules\/zod\//.test(u)],
  ['pino', (u) => /node_modules\/(pino|sonic-boom|fast-redact)/.test(u)],
  ['prom-client', (u) => /node_modules\/prom-client\//.test(u)],
  ['bridge: platform client', (u) => /\/dist\/platform\//.test(u)],
  ['bridge: receiver and queue', (u) => /\/dist\/(receive|queue|events)\//.test(u)],
  ['bridge: worker and rules', (u) => /\/dist\/(worker|rules|actions|run|shared|observe)\//.test(u)],
  ['Node HTTP server', (u) => /node:_http_server|node:_http_incoming/.test(u)],
  [
    'Node HTTP client and socket writes',
    (u) => /node:_http_client|node:_http_agent|node:_http_outgoing/.test(u),
  ],
];

/** Busy time of a CPU profile per category (idle left out), in ms, largest first. */
export function profileCategories(profile: CpuProfile): { category: string; ms: number; share: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const categoryOf = new Map<number, string>();
  const classify = (leaf: number): string => {
    const known = categoryOf.get(leaf);
    if (known) return known;
    let found = 'other (Node internals, microtask queue)';
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (!frame) break;
      const hit = CATEGORIES.find(([, test]) => test(frame.url, frame.functionName));
      if (hit) {
        found = hit[0];
        break;
      }
    }
    categoryOf.set(leaf, found);
    return found;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const category = classify(id);
    totals.set(category, (totals.get(category) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  totals.delete('idle');
  const busy = [...totals.values()].reduce((a, b) => a + b, 0);
  return [...totals]
    .map(([category, us]) => ({ category, ms: round(us / 1000, 0), share: round((100 * us) / busy, 1) }))
    .sort((a, b) => b.ms - a.ms);
}

/** Scavenge and Mark-Compact lines of --trace-gc: counts and main-thread pause totals. */
function gcTracker() {
  const gc = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };
  let on = false;
  let rest = '';
  return {
    gc,
    start: () => {
      on = true;
    },
    stop: () => {
      on = false;
    },
    feed: (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      if (!on) return;
      for (const line of lines) {
        const m = /(Scavenge|Mark-Compact)[^,]*, ([\d.]+) \/ [\d.]+ ms/.exec(line);
        if (!m) continue;
        if (m[1] === 'Scavenge') {
          gc.scavenges += 1;
          gc.scavengeMs += Number(m[2]);
        } else {
          gc.markCompacts += 1;
          gc.markCompactMs += Number(m[2]);
        }
      }
    },
  };
}

async function main() {
  exitUnlessHarness('bench:profile', LOAD_HARNESS);
  const flagsEnv = process.env.PROFILE_NODE_FLAGS;
  const flags = flagsEnv === undefined ? launcherNodeFlags() : flagsEnv.split(' ').filter(Boolean);
  const work = await mkdtemp(join(tmpdir(), 'convo-bridge-profile-'));
  const outDir = join(here, 'results', 'profile');
  await mkdir(outDir, { recursive: true });
  const redis = await startRedisServer({ appendOnly: true });
  const stops: (() => Promise<void>)[] = [() => redis.stop()];
  try {
    const nodeArgs = [...flags, '--trace-gc', '--cpu-prof', `--cpu-prof-dir=${work}`];
    const { api, bridge } = await startBridgeStack(work, redis.url, stops, nodeArgs);
    const tracker = gcTracker();
    bridge.child.stdout?.on('data', tracker.feed);
    const common = ['--url', bridge.url, '--api', api.url, '-c', '32', '--timeout', '120'];
    await runLoad([...common, '-n', String(WARMUP), '--settle', '1'], 300_000);
    const apiPid = api.child.pid ?? 0;
    const cpu0 = await cpuSeconds(bridge.pid);
    const apiCpu0 = await cpuSeconds(apiPid);
    tracker.start();
    const dup = process.env.PROFILE_DUP ? ['--dup', process.env.PROFILE_DUP] : [];
    // PROFILE_RATE: an open loop at that many events/s instead of 32 in flight (batches shrink to
    // one event each, so what one event costs alone shows).
    const rate = process.env.PROFILE_RATE ? ['--rate', process.env.PROFILE_RATE] : [];
    const run = await runLoad([...common, '-n', String(EVENTS), '--settle', '0', ...dup, ...rate], 600_000);
    tracker.stop();
    const cpuMs = ((await cpuSeconds(bridge.pid)) - cpu0) * 1000;
    const apiCpuMs = ((await cpuSeconds(apiPid)) - apiCpu0) * 1000;
    const peak = await statusMb(bridge.pid, 'VmHWM');
    // SIGTERM: the bridge shuts down in order and V8 writes the profile on exit.
    await stopChild(bridge.child);
    const file = (await readdir(work)).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`the bridge wrote no CPU profile into ${work}`);
    const target = join(outDir, 'start.cpuprofile');
    await rename(join(work, file), target);
    const categories = profileCategories(JSON.parse(await readFile(target, 'utf8')) as CpuProfile);
    const { gc } = tracker;
    const f = faults(run);
    console.log(
      `bench:profile, node ${flags.join(' ') || '(V8 defaults)'}: ${EVENTS} events after ${WARMUP} warm-up; ` +
        `${run.actions_per_s} actions/s, missing/dup/wrong ${f.missing}/${f.duplicated}/${f.wrong}; ` +
        `bridge CPU ${round(cpuMs / EVENTS, 3)} ms/event (the profiler adds a few %), peak RSS ${peak} MB`,
    );
    console.log(
      `the rest of the machine per event: fake platform API ${round(apiCpuMs / EVENTS, 3)} ms, load generator ${round(((run.loadgen_cpu_s ?? 0) * 1000) / EVENTS, 3)} ms`,
    );
    console.log(
      `GC during the run: ${gc.scavenges} scavenges (${round(gc.scavengeMs, 0)} ms), ${gc.markCompacts} mark-compacts (${round(gc.markCompactMs, 0)} ms of pauses; their concurrent marking runs on other threads)`,
    );
    console.log(
      textTable([
        ['busy CPU of the bridge (whole profile, warm-up included)', 'ms', '%'],
        ...categories.map((c) => [c.category, String(c.ms), String(c.share)]),
      ]),
    );
    console.log(`profile: ${target} (open it in Chrome DevTools, Performance panel)`);
  } finally {
    for (const stop of stops.reverse()) await stop();
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
