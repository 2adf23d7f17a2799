/**
 * `npm run bench:ingest`: the receiver's throughput and acknowledgement latency beside a bare
 * Express app that parses JSON and answers the same body without touching Redis.
 *
 * Each server runs in its own child process and the load generator (autocannon) in another, all on
 * loopback. Redis is a private `redis-server` with appendonly on (as in production), unless
 * REDIS_URL is set. Two phases per server: saturation (as fast as it answers) and a fixed
 * 1,000 requests/s. Every request carries a new message id, so each one is a real ingest.
 * Bounded in time: PHASE_SECONDS (default 10) per phase, plus a short warm-up.
 * Prints a table and writes bench/results/ingest.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { type RedisServerHandle, startRedisServer } from '../src/redis/start-redis-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const PHASE_SECONDS = Number(process.env.PHASE_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
const FIXED_RATE = 1000;
/** Saturation needs enough requests in flight to keep both servers busy (the receiver waits on Redis). */
const SATURATION_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** At a fixed rate, connections only need to carry it. */
const FIXED_RATE_CONNECTIONS = 20;
/** The machine is shared: how busy it was when the run started, for reading the figures. */
const LOAD_AT_START = loadavg().map((n) => Math.round(n * 100) / 100);
const SECRET = 'bench-secret-0123456789';

type Target = 'baseline' | 'receiver';
type Phase = 'saturation' | 'fixed-1000';

interface PhaseResult {
  target: Target;
  phase: Phase;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** A real-shaped body (test/fixtures/webhooks/channel-message-in.json) with a unique id per request. */
function benchBody(): string {
  const fixture = JSON.parse(
    readFileSync(join(here, '../test/fixtures/webhooks/channel-message-in.json'), 'utf8'),
  ) as { message: Record<string, unknown> };
  return JSON.stringify({ ...fixture, message: { ...fixture.message, id: 'bench-[<id>]' } });
}

function tsxNode(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function startServer(
  target: Target,
  redisUrl: string,
  prefix: string,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = tsxNode([join(here, 'ingest-server.ts'), target], {
    ...process.env,
    REDIS_URL: redisUrl,
    BENCH_PREFIX: prefix,
    BENCH_SECRET: SECRET,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${target} did not start within 20 s: ${stderr}`)),
      20_000,
    );
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${target} exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}

async function load(url: string, durationSeconds: number, overallRate?: number): Promise<AutocannonResult> {
  const settings = {
    url: `${url}/webhooks/platform`,
    headers: { 'content-type': 'application/json', authorization: SECRET },
    body: benchBody(),
    connections: overallRate === undefined ? SATURATION_CONNECTIONS : FIXED_RATE_CONNECTIONS,
    durationSeconds,
    ...(overallRate === undefined ? {} : { overallRate }),
  };
  const child = tsxNode([join(here, 'ingest-load.ts'), JSON.stringify(settings)], process.env);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), (durationSeconds + 30) * 1000);
    child.once('exit', (exitCode) => {
      clearTimeout(kill);
      resolve(exitCode);
    });
  });
  if (code !== 0) throw new Error(`load generator failed (${code}): ${err}`);
  return JSON.parse(out) as AutocannonResult;
}

async function measure(target: Target, redisUrl: string): Promise<PhaseResult[]> {
  const prefix = `bench-${target}-${Date.now()}`;
  const server = await startServer(target, redisUrl, prefix);
  const results: PhaseResult[] = [];
  try {
    await load(server.url, WARMUP_SECONDS);
    for (const phase of ['saturation', 'fixed-1000'] as const) {
      const r = await load(server.url, PHASE_SECONDS, phase === 'fixed-1000' ? FIXED_RATE : undefined);
      results.push({
        target,
        phase,
        requestsPerSecond: Math.round(r.requests.average),
        p50Ms: r.latency.p50,
        p90Ms: r.latency.p90,
        p99Ms: r.latency.p99,
        maxMs: r.latency.max,
        total: r['2xx'] + r.non2xx,
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
      });
      process.stderr.write(
        `  ${target} ${phase}: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms\n`,
      );
    }
  } finally {
    await server.stop();
  }
  if (target === 'receiver') {
    // Sanity: every 2xx answer of the receiver is a stored job.
    const redis = new Redis(redisUrl);
    try {
      const waiting = await redis.llen(`${prefix}:events:wait`);
      process.stderr.write(`  receiver: ${waiting} jobs stored\n`);
    } finally {
      redis.disconnect();
    }
  }
  return results;
}

async function main(): Promise<void> {
  const redis: RedisServerHandle | undefined = process.env.REDIS_URL
    ? undefined
    : await startRedisServer({ appendOnly: true });
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
  process.stderr.write(
    `bench:ingest: ${PHASE_SECONDS} s per phase, ${SATURATION_CONNECTIONS} connections at saturation, ${FIXED_RATE_CONNECTIONS} at ${FIXED_RATE}/s, Redis ${process.env.REDIS_URL ? 'from REDIS_URL' : 'private, appendonly'}\n`,
  );
  try {
    const results = [...(await measure('baseline', redisUrl)), ...(await measure('receiver', redisUrl))];
    const find = (target: Target, phase: Phase) =>
      results.find((r) => r.target === target && r.phase === phase);
    const rows = (['saturation', 'fixed-1000'] as const).map((phase) => {
      const base = find('baseline', phase);
      const recv = find('receiver', phase);
      return {
        phase,
        baselineRps: base?.requestsPerSecond ?? 0,
        receiverRps: recv?.requestsPerSecond ?? 0,
        ratio: base && recv ? Math.round((recv.requestsPerSecond / base.requestsPerSecond) * 100) / 100 : 0,
        baselineP50Ms: base?.p50Ms ?? 0,
        receiverP50Ms: recv?.p50Ms ?? 0,
        baselineP99Ms: base?.p99Ms ?? 0,
        receiverP99Ms: recv?.p99Ms ?? 0,
      };
    });
    console.table(rows);
    const fixed = find('receiver', 'fixed-1000');
    const saturation = rows[0];
    const summary = {
      ratioAtSaturation: saturation?.ratio ?? 0,
      ratioGoal: 0.85,
      receiverP99AtFixedRateMs: fixed?.p99Ms ?? 0,
      p99GoalMs: 10,
      meetsRatioGoal: (saturation?.ratio ?? 0) >= 0.85,
      meetsP99Goal: (fixed?.p99Ms ?? Number.POSITIVE_INFINITY) < 10,
    };
    console.log(summary);
    await mkdir(join(here, 'results'), { recursive: true });
    await writeFile(
      join(here, 'results', 'ingest.json'),
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
          settings: {
            phaseSeconds: PHASE_SECONDS,
            saturationConnections: SATURATION_CONNECTIONS,
            fixedRateConnections: FIXED_RATE_CONNECTIONS,
            loadAverageAtStart: LOAD_AT_START,
            fixedRate: FIXED_RATE,
            redis: process.env.REDIS_URL ? 'REDIS_URL' : 'private redis-server, appendonly yes',
          },
          rows,
          summary,
          results,
        },
        null,
        2,
      )}\n`,
    );
    process.stderr.write('wrote bench/results/ingest.json\n');
  } finally {
    await redis?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
