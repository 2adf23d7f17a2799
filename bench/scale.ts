/**
 * `npm run bench:scale` (issue 14, point 6): how throughput changes with worker processes and with
 * Redis primaries, on this machine, and what one event costs each Redis primary.
 *
 * Each configuration gets fresh processes: its own Redis (append-only file on), the shared
 * harness's fake API, the bridge processes (`start`, or `serve` + N `work`), all on loopback.
 * After a warm-up (SCALE_WARMUP_N, 300), Redis statistics are reset and a closed-loop run of the
 * harness's load.mjs (SCALE_N, 4000 events, 32 in flight) is measured: actions/s, and per event
 * the bridge's CPU (every bridge process, /proc), Redis CPU and commands (summed over the
 * primaries, INFO cpu and commandstats), plus what the whole machine did (the load generator
 * and the fake API share the same 2 cores, which is why the ratios say more than the rates).
 *
 * Configurations: one Redis with 1 (start), 2 (serve + work) and 3 (serve + 2 work) processes;
 * one Redis with 6 tagged shards; a 3-primary cluster with 6 shards. redis-cli cannot create a
 * 1-primary cluster, so "1 primary" is the single Redis with the same sharded keys. No replicas
 * and `replicas_ack: 0` everywhere: this measures the primaries (a replica's WAIT adds a round
 * trip per batch, not Redis CPU). Prints a table and writes bench/results/scale.json.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { findFreePort, startRedisServer } from '../src/redis/start-redis-server.js';
import { startRedisCluster } from '../tools/redis/redis-topology.js';
import {
  CLI,
  cpuSeconds,
  exitUnlessHarness,
  faults,
  HARNESS_ENV,
  LOAD_HARNESS,
  launcherNodeFlags,
  parseCommandstats,
  parseCpu,
  round,
  runLoad,
  startFakeApi,
  textTable,
  writeLoopbackBridgeConfig,
} from './peers-support.js';
import { spawnNode, stopChild, waitUntilOk } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const EVENTS = Number(process.env.SCALE_N ?? 4000);
const WARMUP = Number(process.env.SCALE_WARMUP_N ?? 300);
const CONCURRENCY = 32;

interface ScaleConfig {
  label: string;
  redis: 'single' | 'cluster';
  shards: number;
  workers: number;
  /** `start` (receiver and worker in one process) instead of `serve` + workers. */
  combined?: boolean;
}

const CONFIGS: readonly ScaleConfig[] = [
  { label: '1 Redis, start (1 process)', redis: 'single', shards: 1, workers: 1, combined: true },
  { label: '1 Redis, serve + 1 work', redis: 'single', shards: 1, workers: 1 },
  { label: '1 Redis, serve + 2 work', redis: 'single', shards: 1, workers: 2 },
  { label: '1 Redis (1 primary), 6 shards, serve + 2 work', redis: 'single', shards: 6, workers: 2 },
  { label: 'cluster, 3 primaries, 6 shards, serve + 2 work', redis: 'cluster', shards: 6, workers: 2 },
];

export interface ScaleRow {
  label: string;
  actionsPerS: number | null;
  missing: number;
  duplicated: number;
  wrong: number;
  bridgeCpuMsPerEvent: number;
  redisCpuUsPerEvent: number;
  redisCommandsPerEvent: number;
  /** Redis CPU per event on the busiest primary (the one that runs out first). */
  busiestPrimaryCpuUs: number;
  primaries: number;
}

export interface ScaleResult {
  date: string;
  loadAtStart: number[];
  cores: number;
  events: number;
  rows: ScaleRow[];
  /** Redis memory (used_memory) per event accepted and not yet processed (only `serve` running). */
  pendingBytesPerEvent: number;
  /**
   * Redis memory per event once processed, kept until it expires: the dedupe marker
   * (retention.dedupe, 72 h), the conversation's state, and the completed batch job while
   * retention.done_events keeps done jobs (by default it is deleted as it completes). The figure
   * for sizing a Redis for a given event rate.
   */
  processedBytesPerEvent: number;
}

/**
 * Memory per pending event: `serve` alone on a fresh Redis takes PENDING_N webhooks that no worker
 * processes; used_memory before and after, divided by the count (batch jobs, order slots, dedupe
 * markers, arrival counters: what a backlog costs while the workers are away).
 */
async function pendingMemory(dir: string, events: number): Promise<{ pending: number; processed: number }> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const server = await startRedisServer({ appendOnly: true, dir: await mkdtemp(join(dir, 'redis-')) });
    stops.push(() => server.stop());
    const client = new Redis(server.url);
    stops.push(async () => client.disconnect());
    const api = await startFakeApi(await findFreePort());
    stops.push(() => stopChild(api.child));
    const configPath = await writeLoopbackBridgeConfig(dir);
    const port = await findFreePort();
    const serve = spawnNode([...launcherNodeFlags(), CLI, 'serve', '--config', configPath], {
      ...HARNESS_ENV,
      PLATFORM_BASE_URL: api.url,
      PORT: String(port),
      REDIS_URL: server.url,
    });
    stops.push(() => stopChild(serve.child));
    await waitUntilOk(`http://127.0.0.1:${port}/readyz`, `serve to be ready: ${serve.output()}`, 30_000);
    const used = async () =>
      Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))?.[1] ?? Number.NaN);
    const before = await used();
    // No worker runs, so load.mjs sees no actions: a short drain timeout, and its verdict is ignored.
    await runLoad(
      [
        '--url',
        `http://127.0.0.1:${port}/webhook`,
        '--api',
        api.url,
        '-n',
        String(events),
        '-c',
        String(CONCURRENCY),
        '--timeout',
        '1',
      ],
      120_000,
    ).catch(() => undefined);
    // Events stored = the arrival counter (each accepted event took one number).
    const stored = Number((await client.get('cb:bridge:arrival')) ?? '0');
    if (stored === 0) throw new Error('pendingMemory: no event was stored: the serve process took none');
    const pending = ((await used()) - before) / stored;
    // Then a worker processes the backlog; what stays is what every processed event leaves behind.
    const workPort = await findFreePort();
    const work = spawnNode(
      [...launcherNodeFlags(), CLI, 'work', '--config', configPath, '--port', String(workPort)],
      { ...HARNESS_ENV, PLATFORM_BASE_URL: api.url, PORT: String(port), REDIS_URL: server.url },
    );
    stops.push(() => stopChild(work.child));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const left = (await client.llen('cb:events:wait')) + (await client.zcard('cb:events:delayed'));
      const active = await client.llen('cb:events:active');
      if (left + active === 0) break;
      if (Date.now() > deadline)
        throw new Error(`pendingMemory: the worker did not drain the backlog: ${work.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const processed = ((await used()) - before) / stored;
    return { pending, processed };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

interface Primary {
  client: Redis;
}

async function redisFigures(primaries: readonly Primary[]) {
  const per = await Promise.all(
    primaries.map(async ({ client }) => {
      const commands = Object.values(parseCommandstats(await client.info('commandstats'))).reduce(
        (n, c) => n + c.calls,
        0,
      );
      return { cpu: parseCpu(await client.info('cpu')), commands };
    }),
  );
  return per;
}

async function runConfig(config: ScaleConfig, dir: string): Promise<ScaleRow> {
  const stops: (() => Promise<void>)[] = [];
  try {
    let redisBlock: string;
    let primaries: Primary[];
    if (config.redis === 'single') {
      const server = await startRedisServer({ appendOnly: true, dir: await mkdtemp(join(dir, 'redis-')) });
      stops.push(() => server.stop());
      redisBlock = `redis:\n  url: ${server.url}\n  shards: ${config.shards}\n`;
      primaries = [{ client: new Redis(server.url) }];
    } else {
      const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0, appendOnly: true });
      stops.push(() => cluster.stop());
      redisBlock = `redis:\n  cluster:\n    nodes: [ ${cluster.nodes.map((n) => `"${n.host}:${n.port}"`).join(', ')} ]\n  shards: ${config.shards}\n  replicas_ack: 0\n`;
      primaries = (await cluster.primaries()).map((p) => ({ client: new Redis(p.port, p.host) }));
    }
    stops.push(async () => {
      for (const p of primaries) p.client.disconnect();
    });
    const base = await readFile(await writeLoopbackBridgeConfig(dir), 'utf8');
    const configText = base.replace(/redis:\n {2}url: \$\{REDIS_URL\}\n/, redisBlock);
    if (configText === base)
      throw new Error('the harness bridge.yaml has no `redis:\\n  url: ${REDIS_URL}` block');
    const configPath = join(dir, `bridge-${config.redis}-${config.shards}.yaml`);
    await writeFile(configPath, configText);

    const api = await startFakeApi(await findFreePort());
    stops.push(() => stopChild(api.child));
    const env = { ...HARNESS_ENV, PLATFORM_BASE_URL: api.url };
    const port = await findFreePort();
    const pids: number[] = [];
    const spawnBridge = async (mode: 'start' | 'serve' | 'work') => {
      const healthPort = mode === 'work' ? await findFreePort() : port;
      const extra = mode === 'work' ? ['--port', String(healthPort)] : [];
      const child = spawnNode([...launcherNodeFlags(), CLI, mode, '--config', configPath, ...extra], {
        ...env,
        PORT: String(port),
      });
      stops.push(() => stopChild(child.child));
      await waitUntilOk(
        `http://127.0.0.1:${healthPort}/readyz`,
        `${mode} to be ready: ${child.output()}`,
        30_000,
      );
      if (child.child.pid === undefined) throw new Error(`${mode} did not start: ${child.output()}`);
      pids.push(child.child.pid);
    };
    if (config.combined) await spawnBridge('start');
    else {
      await spawnBridge('serve');
      for (let i = 0; i < config.workers; i++) await spawnBridge('work');
    }
    const url = `http://127.0.0.1:${port}/webhook`;
    const common = ['--url', url, '--api', api.url, '-c', String(CONCURRENCY), '--timeout', '120'];
    await runLoad([...common, '-n', String(WARMUP), '--settle', '1'], 300_000);
    for (const p of primaries) await p.client.config('RESETSTAT');
    const redis0 = await redisFigures(primaries);
    const cpu0 = await Promise.all(pids.map(cpuSeconds));
    // --settle 0: the counters stop when the last expected call has arrived.
    const load = await runLoad([...common, '-n', String(EVENTS), '--settle', '0'], 600_000);
    const cpu1 = await Promise.all(pids.map(cpuSeconds));
    const redis1 = await redisFigures(primaries);
    const bridgeCpu = cpu1.reduce((n, c, i) => n + c - (cpu0[i] ?? 0), 0);
    const redisCpu = redis1.map((r, i) => r.cpu - (redis0[i]?.cpu ?? 0));
    const redisCommands = redis1.reduce((n, r, i) => n + r.commands - (redis0[i]?.commands ?? 0), 0);
    const f = faults(load);
    return {
      label: config.label,
      actionsPerS: load.actions_per_s ?? null,
      missing: f.missing,
      duplicated: f.duplicated,
      wrong: f.wrong,
      bridgeCpuMsPerEvent: round((bridgeCpu * 1000) / EVENTS, 3),
      redisCpuUsPerEvent: round((redisCpu.reduce((a, b) => a + b, 0) * 1e6) / EVENTS, 1),
      redisCommandsPerEvent: round(redisCommands / EVENTS, 1),
      busiestPrimaryCpuUs: round((Math.max(...redisCpu) * 1e6) / EVENTS, 1),
      primaries: primaries.length,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

export async function runScaleBench(): Promise<ScaleResult> {
  const result: ScaleResult = {
    date: new Date().toISOString(),
    loadAtStart: loadavg().map((n) => round(n, 2)),
    cores: cpus().length,
    events: EVENTS,
    rows: [],
    pendingBytesPerEvent: 0,
    processedBytesPerEvent: 0,
  };
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-scale-'));
  try {
    for (const config of CONFIGS) {
      console.error(`bench:scale: ${config.label}`);
      result.rows.push(await runConfig(config, dir));
    }
    console.error('bench:scale: memory per pending event');
    const memory = await pendingMemory(dir, 2_000);
    result.pendingBytesPerEvent = round(memory.pending, 0);
    result.processedBytesPerEvent = round(memory.processed, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

export function scaleTable(result: ScaleResult): string {
  return textTable([
    [
      'configuration',
      'actions/s',
      'missing/dup/wrong',
      'bridge CPU ms/event',
      'Redis CPU us/event (all)',
      'busiest primary us/event',
      'Redis cmds/event',
    ],
    ...result.rows.map((r) => [
      r.label,
      String(r.actionsPerS ?? '-'),
      `${r.missing}/${r.duplicated}/${r.wrong}`,
      String(r.bridgeCpuMsPerEvent),
      String(r.redisCpuUsPerEvent),
      String(r.busiestPrimaryCpuUs),
      String(r.redisCommandsPerEvent),
    ]),
  ]);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  exitUnlessHarness('bench:scale', LOAD_HARNESS);
  const result = await runScaleBench();
  console.log(
    `bench:scale, ${result.events} events per configuration (${CONCURRENCY} in flight), ${result.cores} cores, load average at start ${result.loadAtStart.join(' ')}`,
  );
  console.log(scaleTable(result));
  console.log(
    `Redis memory per event: ${result.pendingBytesPerEvent} bytes while pending (accepted, not processed); ${result.processedBytesPerEvent} bytes once processed (dedupe marker for retention.dedupe, conversation state, the completed job while retention.done_events keeps it)`,
  );
  await mkdir(join(here, 'results'), { recursive: true });
  await writeFile(join(here, 'results', 'scale.json'), `${JSON.stringify(result, null, 2)}\n`);
  if (result.rows.some((r) => r.missing + r.duplicated + r.wrong > 0)) process.exitCode = 1;
}
