/**
 * `npm run bench:businesses` (issue 26): what serving many businesses in one process costs, and
 * whether one business can hurt the others.
 *
 * 1. Cost: one `convo-bridge start` (the launcher's V8 flags, as users start it) with a config of
 *    one business without `businesses:`, then 1, 10 and 200 businesses, each on a fresh private
 *    Redis with the append-only file on and the benches' own fake platform API (fake-platform.ts,
 *    the shared harness's fake API's answers; no harness needed): start-up time
 *    (spawn to /readyz), idle RSS (after 5 s), config reload time (a rule's text changed, from the
 *    write to the "reloaded" log line, the watcher's 150 ms debounce included), and actions/s of
 *    the harness's rule under a closed loop of 32 in flight spread evenly over the businesses.
 * 2. Isolation: three quiet businesses at 20 webhooks/s each and a fourth one, alone, then while
 *    the fourth's platform refuses its credentials (every call 401) and while it floods the bridge
 *    with 10x a quiet business's traffic: the quiet businesses' e2e p99 beside it vs alone.
 *
 * Prints tables and writes bench/results/businesses.json. Exits non-zero only when a run fails or
 * an event was missing, duplicated or wrong.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { waitFor } from '../src/base/wait-for.js';
import { findFreePort, startRedisServer } from '../src/redis/start-redis-server.js';
import {
  buildEvents,
  expectedCalls,
  type LoadEvent,
  percentile,
  sendClosedLoop,
  sendOpenLoop,
  type Target,
  waitForCalls,
} from './businesses-load.js';
import {
  CLI,
  HARNESS_ENV,
  launcherNodeFlags,
  round,
  startOwnFakePlatform,
  statusMb,
  textTable,
} from './peers-support.js';
import { stopChild, waitUntilOk } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const SIZES = (process.env.BUSINESSES_SIZES ?? '0 1 10 200').split(' ').map(Number);
const EVENTS = Number(process.env.BUSINESSES_N ?? 5000);
const WARMUP = 500;
const QUIET_RATE = 20;
const SECONDS = Number(process.env.BUSINESSES_SECONDS ?? 15);

const RULES = `rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund, komplain, kecewa, marah ] } }
    then:
      - note: "Escalated: keyword {{match.keyword}}"
      - need_human: true
    stop: true
  - name: acknowledge
    on: message_in
    then:
      - reply: { text: "Terima kasih, pesan Anda sudah kami terima." }
`;

/** The platform account the fake accepts: a business given another secret is refused (its 401 storm). */
const PLATFORM_ACCOUNT = { business: HARNESS_ENV.BUSINESS_ID, secret: HARNESS_ENV.SECRET_KEY };

const idOf = (i: number) => `b${String(i).padStart(3, '0')}`;

/** A config of `count` businesses (0: one business, without `businesses:`), each its own path and secret. */
function configOf(
  count: number,
  options: { secretOf?: (id: string) => string; ruleText?: string } = {},
): string {
  const platform = `platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
  auth: { scheme: headers, business_id: ${HARNESS_ENV.BUSINESS_ID}, secret: ${HARNESS_ENV.SECRET_KEY} }
`;
  const rules = options.ruleText ? RULES.replace('Terima kasih', options.ruleText) : RULES;
  const worker = process.env.BUSINESSES_WORKER ? `worker: ${process.env.BUSINESSES_WORKER}\n` : '';
  const shared = `${worker}receiver:
  host: 127.0.0.1
  port: \${PORT}
${count === 0 ? `  path: /webhook\n  secrets: [ "${HARNESS_ENV.WEBHOOK_SECRET}" ]\n` : ''}redis:
  url: \${REDIS_URL}
`;
  if (count === 0) return platform + shared + rules;
  const entries = Array.from({ length: count }, (_, i) => {
    const id = idOf(i);
    const secret = options.secretOf?.(id);
    return `  - id: ${id}
    receiver: { path: /webhook/${id}, secrets: [ whsec_${id} ] }${secret ? `\n    platform: { auth: { business_id: ${HARNESS_ENV.BUSINESS_ID}, secret: ${secret} } }` : ''}`;
  });
  return `${platform + shared + rules}businesses:\n${entries.join('\n')}\n`;
}

/** The bridge as users start it, with its stdout read line by line (the reload's log line). */
async function startBridge(config: string, apiUrl: string, redisUrl: string) {
  const port = await findFreePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...launcherNodeFlags(), CLI, 'start', '--config', config], {
    env: { ...process.env, PLATFORM_BASE_URL: apiUrl, PORT: String(port), REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: { at: number; text: string }[] = [];
  let tail = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (tail + chunk.toString()).split('\n');
    tail = parts.pop() ?? '';
    for (const text of parts) lines.push({ at: performance.now(), text });
  });
  child.stderr.on('data', (chunk: Buffer) => {
    lines.push({ at: performance.now(), text: chunk.toString() });
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilOk(
    `${base}/readyz`,
    `the bridge to be ready: ${lines
      .slice(-5)
      .map((l) => l.text)
      .join('\n')}`,
    60_000,
  );
  const startupMs = performance.now() - started;
  if (child.pid === undefined) throw new Error('the bridge did not start');
  return { child, pid: child.pid, base, startupMs, lines };
}

interface CostRow {
  businesses: number;
  startupMs: number;
  idleRssMb: number;
  reloadMs: number;
  actionsPerS: number;
  e2eP99Ms: number | null;
  missing: number;
  duplicated: number;
  wrong: number;
}

/** One size: start-up, idle RSS, a reload, then the spread load. */
async function measureCost(count: number, dir: string): Promise<CostRow> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const redis = await startRedisServer({ appendOnly: true });
    stops.push(() => redis.stop());
    const api = await startOwnFakePlatform(await findFreePort(), PLATFORM_ACCOUNT);
    stops.push(() => stopChild(api.child));
    const config = join(dir, `bridge-${count}.yaml`);
    await writeFile(config, configOf(count));
    const bridge = await startBridge(config, api.url, redis.url);
    stops.push(() => stopChild(bridge.child as ChildProcess));
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const idleRssMb = await statusMb(bridge.pid, 'VmRSS');

    const seen = bridge.lines.length;
    const wrote = performance.now();
    await writeFile(config, configOf(count, { ruleText: 'Terima kasih banyak' }));
    const reloaded = await waitFor(
      () => bridge.lines.slice(seen).find((line) => line.text.includes('config reloaded')),
      { timeoutMs: 30_000, what: 'the reload' },
    );
    const reloadMs = reloaded.at - wrote;
    await writeFile(config, configOf(count));
    await waitFor(
      () => bridge.lines.slice(seen).filter((line) => line.text.includes('config reloaded')).length >= 2,
      { timeoutMs: 30_000, what: 'the second reload' },
    );

    const targetOf = (i: number): Target =>
      count === 0
        ? { url: `${bridge.base}/webhook`, secret: HARNESS_ENV.WEBHOOK_SECRET }
        : { url: `${bridge.base}/webhook/${idOf(i % count)}`, secret: `whsec_${idOf(i % count)}` };
    const warm = buildEvents(WARMUP, `w${count}`, targetOf);
    await sendClosedLoop(warm, 32);
    await waitForCalls(api.url, warm, 60_000, 0);
    const events = buildEvents(EVENTS, `r${count}`, targetOf);
    const failedSends = await sendClosedLoop(events, 32);
    const checked = await waitForCalls(api.url, events, 120_000);
    if (failedSends > 0) throw new Error(`${failedSends} webhooks were not answered 200`);
    if (checked.missing > 0) {
      // What holds the missing ones: the queue's counts and the bridge's last warnings.
      const queue = new Queue('events', { connection: { url: redis.url } as never, prefix: 'cb' });
      process.stderr.write(
        `missing ${checked.missing}: events queue ${JSON.stringify(await queue.getJobCounts())}\n${bridge.lines
          .filter((l) => /"level":(40|50)/.test(l.text))
          .slice(-5)
          .map((l) => l.text.slice(0, 400))
          .join('\n')}\n`,
      );
      await queue.close();
    }
    return {
      businesses: count,
      startupMs: round(bridge.startupMs, 0),
      idleRssMb,
      reloadMs: round(reloadMs, 0),
      actionsPerS: round((expectedCalls(events) / (checked.lastCall - checked.firstSend)) * 1000, 1),
      e2eP99Ms: percentile(checked.e2e, 99),
      missing: checked.missing,
      duplicated: checked.duplicated,
      wrong: checked.wrong,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

interface IsolationRow {
  scenario: string;
  quietP99Ms: number | null;
  quietP50Ms: number | null;
  ratioP99: number | null;
  quietMissing: number;
  quietDuplicated: number;
  noisyDone: string;
}

/** Three quiet businesses and a fourth as the scenario makes it; the quiet ones' e2e. */
async function measureIsolation(
  scenario: 'alone' | '401 storm' | '10x flood',
  dir: string,
): Promise<Omit<IsolationRow, 'ratioP99'>> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const redis = await startRedisServer({ appendOnly: true });
    stops.push(() => redis.stop());
    const apiPort = await findFreePort();
    const api = await startOwnFakePlatform(apiPort, PLATFORM_ACCOUNT);
    stops.push(() => stopChild(api.child));
    const config = join(dir, 'isolation.yaml');
    // The fourth business's platform account: refused in the storm (the fake API checks the secret).
    await writeFile(
      config,
      configOf(4, {
        secretOf: (id) =>
          id === 'b003' && scenario === '401 storm' ? 'wrong_secret' : HARNESS_ENV.SECRET_KEY,
      }),
    );
    const bridge = await startBridge(config, api.url, redis.url);
    stops.push(() => stopChild(bridge.child as ChildProcess));
    const target = (id: string): Target => ({ url: `${bridge.base}/webhook/${id}`, secret: `whsec_${id}` });
    const perQuiet = QUIET_RATE * SECONDS;
    const quiet = [0, 1, 2].map((q) => buildEvents(perQuiet, `q${q}`, () => target(idOf(q))));
    const noisyRate = scenario === 'alone' ? 0 : scenario === '401 storm' ? QUIET_RATE : QUIET_RATE * 10;
    const noisy = buildEvents(noisyRate * SECONDS, 'noisy', () => target('b003'));
    const sends = [...quiet.map((events) => sendOpenLoop(events, QUIET_RATE))];
    if (noisy.length > 0) sends.push(sendOpenLoop(noisy, noisyRate));
    await Promise.all(sends);
    const all: LoadEvent[] = quiet.flat();
    const checked = await waitForCalls(api.url, all, 60_000);
    let noisyDone = '-';
    if (scenario === '10x flood') {
      const n = await waitForCalls(api.url, noisy, 120_000, 0);
      noisyDone = `${n.complete}/${noisy.length}`;
    } else if (scenario === '401 storm') {
      noisyDone = `0 acted, ${noisy.length} paused`;
    }
    return {
      scenario,
      quietP99Ms: percentile(checked.e2e, 99),
      quietP50Ms: percentile(checked.e2e, 50),
      quietMissing: checked.missing,
      quietDuplicated: checked.duplicated,
      noisyDone,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

async function main() {
  const loadAtStart = loadavg().map((n) => round(n, 2));
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-businesses-'));
  try {
    const cost: CostRow[] = [];
    for (const count of SIZES) {
      process.stderr.write(`cost: ${count === 0 ? 'one business, no businesses:' : `${count} businesses`}\n`);
      cost.push(await measureCost(count, dir));
    }
    const isolation: IsolationRow[] = [];
    const scenarios =
      process.env.BUSINESSES_ISOLATION === '0' ? [] : (['alone', '401 storm', '10x flood'] as const);
    let alone: number | null = null;
    for (const scenario of scenarios) {
      process.stderr.write(`isolation: ${scenario}\n`);
      const row = await measureIsolation(scenario, dir);
      if (scenario === 'alone') alone = row.quietP99Ms;
      isolation.push({
        ...row,
        ratioP99: alone && row.quietP99Ms !== null ? round(row.quietP99Ms / alone, 2) : null,
      });
    }
    const machine = `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, load at start ${loadAtStart.join(' ')}`;
    console.log(`\nconvo-bridge, many businesses: ${machine}\n`);
    console.log(
      textTable([
        [
          'businesses',
          'start-up ms',
          'idle RSS MB',
          'reload ms',
          'actions/s',
          'e2e p99 ms',
          'missing',
          'dup',
          'wrong',
        ],
        ...cost.map((r) => [
          r.businesses === 0 ? 'none (one)' : String(r.businesses),
          String(r.startupMs),
          String(r.idleRssMb),
          String(r.reloadMs),
          String(r.actionsPerS),
          String(r.e2eP99Ms === null ? '-' : round(r.e2eP99Ms, 1)),
          String(r.missing),
          String(r.duplicated),
          String(r.wrong),
        ]),
      ]),
    );
    console.log(`\nthree quiet businesses at ${QUIET_RATE}/s each for ${SECONDS} s, beside a fourth:\n`);
    console.log(
      textTable([
        [
          'fourth business',
          'quiet e2e p50 ms',
          'quiet e2e p99 ms',
          'p99 vs alone',
          'quiet missing',
          'quiet dup',
          'fourth',
        ],
        ...isolation.map((r) => [
          r.scenario,
          String(r.quietP50Ms === null ? '-' : round(r.quietP50Ms, 1)),
          String(r.quietP99Ms === null ? '-' : round(r.quietP99Ms, 1)),
          String(r.ratioP99 ?? '-'),
          String(r.quietMissing),
          String(r.quietDuplicated),
          r.noisyDone,
        ]),
      ]),
    );
    await mkdir(join(here, 'results'), { recursive: true });
    await writeFile(
      join(here, 'results', 'businesses.json'),
      `${JSON.stringify({ date: new Date().toISOString(), machine, events: EVENTS, cost, isolation }, null, 2)}\n`,
    );
    const bad =
      cost.some((r) => r.missing + r.duplicated + r.wrong > 0) ||
      isolation.some((r) => r.quietMissing + r.quietDuplicated > 0);
    process.exitCode = bad ? 1 : 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
