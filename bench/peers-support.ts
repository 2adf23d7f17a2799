/**
 * Helpers for running the shared side-by-side harness (`../shared/peers`, see its README) from
 * this project's benches: where it lives, its fake API and load generator as child processes, the
 * bridge started the way the harness's `bridge` target starts it, and load.mjs's JSON result read
 * through a schema. The harness files are used as they are; nothing here writes into that folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { findFreePort } from '../src/redis/start-redis-server.js';
import { spawnNode, stopChild, waitUntilOk } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = resolve(here, '..');
export const CLI = join(PROJECT_ROOT, 'dist', 'cli.js');
/** The shared harness, `../shared/peers` from the project root (PEERS_HARNESS_DIR overrides). */
export const HARNESS_DIR = process.env.PEERS_HARNESS_DIR ?? resolve(PROJECT_ROOT, '..', 'shared', 'peers');

/** The harness's files a bench may use. */
export type HarnessFile =
  | 'fake-api.mjs'
  | 'load.mjs'
  | 'bridge.yaml'
  | 'bench-matrix.sh'
  | 'run-node-red.sh'
  | 'summarize.mjs'
  | 'raw-ack.mjs'
  | 'ref-bridge.mjs';

/** The side-by-side harness, or a file of it, is not where the benches look for it. */
export class HarnessMissingError extends Error {
  override readonly name = 'HarnessMissingError';
}

/**
 * Throws at once, before anything starts, when the harness lacks a file `bench` needs: it lives
 * beside this repository in the workspace where the published figures were measured, not in a
 * clone, and without this check a bench waited 20 s for a fake API that could not start.
 */
export function requireHarness(bench: string, files: readonly HarnessFile[], dir = HARNESS_DIR): void {
  const missing = files.filter((file) => !existsSync(join(dir, file)));
  if (missing.length === 0) return;
  const what = existsSync(dir) ? `${dir} lacks ${missing.join(', ')}` : `${dir} does not exist`;
  throw new HarnessMissingError(
    `${bench} needs the side-by-side harness (${files.join(', ')}), and ${what}. The benches look for it in ../shared/peers from the project root (the workspace's shared folder); set PEERS_HARNESS_DIR=DIR to point at a copy. bench:businesses, bench:forget, bench:rules, bench:ingest, bench:e2e and bench:rate need no harness.`,
  );
}

/** The credentials the harness's fake API and load generator use (its README, bench-matrix.sh). */
export const HARNESS_ENV = {
  BUSINESS_ID: 'biz_1',
  SECRET_KEY: 'api_secret_test',
  WEBHOOK_SECRET: 'whsec_test',
} as const;

const num = z.number();
const maybe = z.number().nullable().optional();

/** The fields of one load.mjs result this project reads (load.mjs prints more). */
export const loadResultSchema = z.looseObject({
  label: z.string().optional(),
  mode: z.string(),
  n: num,
  dup_rate: num,
  sent: num,
  acked: num,
  ack_rps: num,
  ack_p99_ms: maybe,
  e2e_p50_ms: maybe,
  e2e_p99_ms: maybe,
  e2e_max_ms: maybe,
  all_done_wall_s: maybe,
  actions_per_s: maybe,
  expected_actions: num.optional(),
  timed_out: z.boolean().optional(),
  missing_actions: num.optional(),
  duplicate_conversations: num.optional(),
  extra_actions: num.optional(),
  wrong_endpoint_actions: num.optional(),
  wrong_content_actions: num.optional(),
  rejected_api_calls: num.optional(),
  max_schedule_lag_ms: num.optional(),
  peer: z.looseObject({ rss_max_mb: num, rss_start_mb: num, cpu_s: num }).optional(),
  loadgen_cpu_s: num,
});
export type LoadResult = z.infer<typeof loadResultSchema>;

export function parseLoadResult(text: string, where: string): LoadResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: load.mjs printed something that is not JSON: ${text.slice(0, 300)}`, {
      cause: error,
    });
  }
  const parsed = loadResultSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`${where}: load.mjs result has an unexpected shape: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Wrong, duplicated or missing calls of one run, summed the way the goal counts them. */
export function faults(r: LoadResult) {
  return {
    missing: r.missing_actions ?? 0,
    duplicated: r.duplicate_conversations ?? 0,
    wrong: (r.wrong_endpoint_actions ?? 0) + (r.wrong_content_actions ?? 0),
  };
}

/** True when nothing listens on 127.0.0.1:port (a listener on 0.0.0.0 or :: also counts as busy). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

/** A bench's first step: when the harness lacks what it needs, say so and exit 2 before starting anything. */
export function exitUnlessHarness(bench: string, files: readonly HarnessFile[]): void {
  try {
    requireHarness(bench, files);
  } catch (error) {
    if (!(error instanceof HarnessMissingError)) throw error;
    process.stderr.write(`${bench}: ${error.message}\n`);
    process.exit(2);
  }
}

/** What the benches that drive the bridge with the harness's load generator use of it. */
export const LOAD_HARNESS: readonly HarnessFile[] = ['fake-api.mjs', 'load.mjs', 'bridge.yaml'];

/**
 * The harness's bridge.yaml with `receiver.host: 127.0.0.1` added: the file leaves the host to
 * the bridge's default (0.0.0.0), and these benches listen on loopback only. Everything else
 * (rules, platform form, auth) is the harness's file as it is, read afresh on each run.
 */
export async function writeLoopbackBridgeConfig(dir: string): Promise<string> {
  requireHarness('this bench', ['bridge.yaml']);
  const source = await readFile(join(HARNESS_DIR, 'bridge.yaml'), 'utf8');
  if (!/^receiver:\s*$/m.test(source) || /^\s+host:/m.test(source)) {
    throw new Error(
      `${HARNESS_DIR}/bridge.yaml: expected a block 'receiver:' without a host; its layout changed, update writeLoopbackBridgeConfig`,
    );
  }
  const file = join(dir, 'bridge.yaml');
  let config = source.replace(/^receiver:\s*$/m, 'receiver:\n  host: 127.0.0.1');
  // PEERS_SHADOW=1: shadow rules on (issue 28), with a candidate identical to the rules, so that
  // the run shows what evaluating and comparing a second rule set costs when the plans agree.
  if (process.env.PEERS_SHADOW === '1') {
    const rules = /^rules:\n(?:[ #].*\n|\n)*/m.exec(config)?.[0];
    if (rules === undefined) throw new Error(`${HARNESS_DIR}/bridge.yaml: expected a rules: section`);
    await writeFile(join(dir, 'candidate.yaml'), rules);
    config = `${config.trimEnd()}\nshadow:\n  rules: candidate.yaml\n`;
  }
  await writeFile(file, config);
  return file;
}

/** The harness's fake platform API on 127.0.0.1:port, ready when /healthz answers. */
export async function startFakeApi(port: number) {
  requireHarness('this bench', ['fake-api.mjs']);
  const api = spawnNode([join(HARNESS_DIR, 'fake-api.mjs')], { PORT: String(port), HOST: '127.0.0.1' });
  return { ...api, url: await readyOrExited(api, port, 'the fake API') };
}

/**
 * The project's own fake platform (bench/fake-platform.ts, the harness's fake API's answers and
 * `/_stats`) on 127.0.0.1:port, as a child process: for benches that need no other part of the
 * harness, so that they run from any clone. `expect`: the credentials it accepts (else any).
 */
export async function startOwnFakePlatform(port: number, expect?: { business: string; secret: string }) {
  const api = spawnNode(['--import', 'tsx', join(PROJECT_ROOT, 'bench', 'fake-platform.ts')], {
    PORT: String(port),
    ...(expect ? { EXPECT_BUSINESS: expect.business, EXPECT_SECRET: expect.secret } : {}),
  });
  return { ...api, url: await readyOrExited(api, port, 'the fake platform') };
}

/** Its URL once GET /healthz answers; rejects at once with its output when the process exits first. */
async function readyOrExited(api: ReturnType<typeof spawnNode>, port: number, what: string): Promise<string> {
  const url = `http://127.0.0.1:${port}`;
  let onExit: (() => void) | undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = () => reject(new Error(`${what} exited before it answered: ${api.output()}`));
    api.child.once('exit', onExit);
  });
  try {
    await Promise.race([waitUntilOk(`${url}/healthz`, `${what} to start: ${api.output()}`), exited]);
  } finally {
    if (onExit) api.child.off('exit', onExit);
    exited.catch(() => undefined);
  }
  return url;
}

/**
 * `node dist/cli.js start` as bench-matrix.sh's `bridge` target starts it (same env names and
 * credentials), ready once /readyz answers (it writes to Redis, so Redis is reachable too).
 */
export async function startHarnessBridge(options: {
  config: string;
  fakeApiUrl: string;
  redisUrl: string;
  port: number;
  /** Node flags before the script (the bin launcher's V8 settings, see launcherNodeFlags). */
  nodeArgs?: string[];
  /** The built CLI to start (default: this checkout's dist/cli.js; bench:ab starts another build). */
  cli?: string;
}) {
  const bridge = spawnNode(
    [...(options.nodeArgs ?? []), options.cli ?? CLI, 'start', '--config', options.config],
    {
      ...HARNESS_ENV,
      PLATFORM_BASE_URL: options.fakeApiUrl,
      PORT: String(options.port),
      REDIS_URL: options.redisUrl,
    },
  );
  await waitUntilOk(
    `http://127.0.0.1:${options.port}/readyz`,
    `the bridge to be ready: ${bridge.output()}`,
    30_000,
  );
  const pid = bridge.child.pid;
  if (pid === undefined) throw new Error(`the bridge did not start: ${bridge.output()}`);
  return { ...bridge, pid, url: `http://127.0.0.1:${options.port}/webhook` };
}

/**
 * The fake API and the bridge (`start`, loopback config) on free ports over an already running
 * Redis; each is registered in `stops` as soon as it runs, so the caller's finally stops it.
 */
export async function startBridgeStack(
  dir: string,
  redisUrl: string,
  stops: (() => Promise<void>)[],
  nodeArgs?: string[],
) {
  const config = await writeLoopbackBridgeConfig(dir);
  const api = await startFakeApi(await findFreePort());
  stops.push(() => stopChild(api.child));
  const bridge = await startHarnessBridge({
    config,
    fakeApiUrl: api.url,
    redisUrl,
    port: await findFreePort(),
    ...(nodeArgs ? { nodeArgs } : {}),
  });
  stops.push(() => stopChild(bridge.child));
  return { api, bridge };
}

/**
 * Runs the harness's load.mjs with `args` and returns its result. Bounded: killed after
 * `timeoutMs` (its own --timeout bounds the drain; this bounds everything else).
 */
export function runLoad(args: string[], timeoutMs: number): Promise<LoadResult> {
  requireHarness('this bench', ['load.mjs']);
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [join(HARNESS_DIR, 'load.mjs'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`load.mjs ${args.join(' ')} exited with ${code ?? signal}: ${stderr}`));
        return;
      }
      try {
        resolveRun(parseLoadResult(stdout, `load.mjs ${args.join(' ')}`));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** /proc/<pid>/stat utime + stime in seconds (clock ticks of 1/100 s, as load.mjs assumes). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One field of /proc/<pid>/status in MB (VmRSS, VmHWM). */
export async function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Math.round(Number(match[1]) / 102.4) / 10;
}

/** Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0). */
export async function resetPeakRss(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/** Fixed-width text table; a column whose cells are all numbers is right-aligned. */
export function textTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  const numeric = widths.map((_, i) => rows.slice(1).every((row) => /^-?[\d.]+$|^-$/.test(row[i] ?? '')));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * The V8 flags the `convo-bridge` bin starts node with (its `#!/usr/bin/env -S node ...` line), so
 * a benchmark can start the bridge the way `npx convo-bridge` and the Docker image do.
 */
export function launcherNodeFlags(): string[] {
  const first = readFileSync(CLI, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\/usr\/bin\/env -S node (.*)$/.exec(first);
  return match?.[1] ? match[1].split(' ').filter(Boolean) : [];
}

/** `cmdstat_hset:calls=12,usec=30,...` lines of INFO commandstats. */
export function parseCommandstats(info: string): Record<string, { calls: number; usec: number }> {
  const out: Record<string, { calls: number; usec: number }> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    const [, name = '?', calls = '0', usec = '0'] = match;
    out[name] = { calls: Number(calls), usec: Number(usec) };
  }
  return out;
}

/** used_cpu_sys + used_cpu_user of INFO cpu, in seconds (the whole server, threads included). */
export function parseCpu(info: string): number {
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  const total = field('used_cpu_sys') + field('used_cpu_user');
  if (!Number.isFinite(total)) throw new Error(`INFO cpu without used_cpu_sys/used_cpu_user: ${info}`);
  return total;
}
