/**
 * `npm run bench:e2e`: events per second from webhook to the last platform call, with the real
 * pieces on loopback: a private redis-server (append-only file on, as in production), the platform
 * emulator as its own process, convo-bridge as a user starts it (`node dist/cli.js start`, or
 * `serve` + `work` with BENCH_LAYOUT=split), and this process as the platform sending webhooks.
 *
 * Workload: 70% order messages (rule `order`: one note) and 30% complaints (rule `escalate`: note
 * + need-human), so about 1.3 platform calls per event, spread over many conversations (events of
 * one conversation are processed in order, so a busy conversation serialises).
 * Phases: a fixed rate (200 events/s) for latency, then saturation (as fast as the receiver takes
 * them) for throughput. Latency of an event = time of its last platform call (the emulator's
 * request log) minus the time its webhook was sent. Peak RSS of the bridge per phase from
 * /proc/<pid>/status (VmHWM, reset between phases). Bounded: each phase has an event count and a
 * deadline. Prints a table and writes bench/results/e2e.json (importable by bench/all.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../src/base/wait-for.js';
import { findFreePort, type RedisServerHandle, startRedisServer } from '../src/redis/start-redis-server.js';
import { spawnNode, stopChild, waitUntilOk } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'dist', 'cli.js');
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 3000);
const FIXED_RATE = Number(process.env.BENCH_RATE ?? 200);
const FIXED_SECONDS = Number(process.env.BENCH_FIXED_SECONDS ?? 15);
const SATURATION_EVENTS = Number(process.env.BENCH_SATURATION_EVENTS ?? 12_000);
const SATURATION_IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const PHASE_DEADLINE_MS = 120_000;
const LAYOUT = (process.env.BENCH_LAYOUT ?? 'start') as 'start' | 'split';
const CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 64);
/** Extra node flags for the bridge processes only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const BRIDGE_NODE_ARGS = (process.env.BENCH_BRIDGE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const SECRET = 'bench-platform-secret';
const WEBHOOK_SECRET = 'bench-webhook-secret';

export interface E2ePhaseResult {
  phase: string;
  events: number;
  platformCalls: number;
  /** Events fully processed per second (first webhook sent -> last platform call). */
  eventsPerSecond: number;
  callsPerSecond: number;
  /** Webhooks acknowledged per second by the receiver. */
  acksPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  ackP99Ms: number;
  non200: number;
  peakRssMb: number;
}

const CONFIG = `
platform:
  base_url: \${PLATFORM_BASE_URL}
  form: current
  auth: { scheme: headers, business_id: bench-biz, secret: ${SECRET} }
receiver:
  host: 127.0.0.1
  port: \${PORT}
  secrets: [ "${WEBHOOK_SECRET}" ]
redis:
  url: \${REDIS_URL}
  prefix: bench
worker:
  concurrency: \${CONCURRENCY}
log:
  level: warn
timezone: Asia/Jakarta
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund, komplain, kecewa ] } }
    then:
      - note: "escalated {{event.messageId}}"
      - need_human: true
    stop: true
  - name: order
    on: message_in
    if: { text: { any_keywords: [ pesanan, order ] } }
    then:
      - note: "seen {{event.messageId}}"
`;

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok)
    throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

async function peakRss(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    total += match ? Number(match[1]) / 1024 : 0;
  }
  return Math.round(total);
}

async function resetPeakRss(pids: number[]) {
  // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
  for (const pid of pids) await writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => undefined);
}

interface SentEvent {
  messageId: string;
  conversationId: string;
  complaint: boolean;
  sentAt: number;
  ackMs: number;
  status: number;
}

function webhookBody(messageId: string, conversationId: string, text: string): string {
  return JSON.stringify({
    event: 'channel.message_in',
    timestamp: Math.floor(Date.now() / 1000),
    conversation_id: conversationId,
    conversation_label: 'Pelanggan',
    need_human: 0,
    message: {
      id: messageId,
      sender_name: 'Pelanggan',
      channel: { id: 'ch_wa_1', name: 'WhatsApp', engine: 'wa' },
      bisnis: { id: 'bench-biz', name: 'Toko Bench' },
      user: { id: 'u1', name: 'Owner' },
      content: { type: 'text', text },
    },
  });
}

function post(agent: Agent, port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path: '/webhooks/platform',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: WEBHOOK_SECRET,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function runPhase(
  phase: string,
  ctx: { port: number; emulatorUrl: string; pids: number[]; agent: Agent; seq: { n: number } },
  plan: { rate?: number; count: number },
): Promise<E2ePhaseResult> {
  const callsBefore = (await json<{ requestsSeen: number }>(`${ctx.emulatorUrl}/_emulator/state`))
    .requestsSeen;
  await resetPeakRss(ctx.pids);
  const sent: SentEvent[] = [];
  const send = async () => {
    const n = ctx.seq.n++;
    const complaint = n % 10 < 3;
    const messageId = `m-${phase}-${n}`;
    const conversationId = `bc-${n % CONVERSATIONS}`;
    const text = complaint ? `Saya kecewa, minta refund ${n}` : `Status pesanan saya ${n}?`;
    const started = Date.now();
    const t0 = performance.now();
    const status = await post(ctx.agent, ctx.port, webhookBody(messageId, conversationId, text)).catch(
      () => 0,
    );
    sent.push({
      messageId,
      conversationId,
      complaint,
      sentAt: started,
      ackMs: performance.now() - t0,
      status,
    });
  };
  const begin = Date.now();
  if (plan.rate) {
    const interval = 1000 / plan.rate;
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < plan.count; i++) {
      const due = begin + i * interval;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(send());
    }
    await Promise.all(inFlight);
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: SATURATION_IN_FLIGHT }, async () => {
        while (next < plan.count && Date.now() - begin < PHASE_DEADLINE_MS) {
          next += 1;
          await send();
        }
      }),
    );
  }
  const acked = Date.now();
  const accepted = sent.filter((e) => e.status === 200);
  const expectedCalls = accepted.reduce((sum, e) => sum + (e.complaint ? 2 : 1), 0);
  await waitFor(
    async () =>
      (await json<{ requestsSeen: number }>(`${ctx.emulatorUrl}/_emulator/state`)).requestsSeen -
        callsBefore >=
      expectedCalls,
    { timeoutMs: PHASE_DEADLINE_MS, intervalMs: 50, what: `${phase}: ${expectedCalls} platform calls` },
  );
  const peakRssMb = await peakRss(ctx.pids);
  const { requests: log } = await json<{
    requests: {
      at: string;
      endpoint: string | null;
      body: { conversation_id?: string; note?: string } | null;
    }[];
  }>(`${ctx.emulatorUrl}/_emulator/requests?limit=1000000`);
  const byMessage = new Map(accepted.map((e) => [e.messageId, e]));
  const noteAt = new Map<string, number>();
  const lastCall = new Map<string, number>();
  // Requests are logged oldest first; a complaint's need-human is the first one in its
  // conversation after its note (one conversation is processed one event at a time).
  const pendingHuman = new Map<string, string[]>();
  for (const entry of log) {
    const at = Date.parse(entry.at);
    if (entry.endpoint === 'note' && entry.body?.note) {
      const id = entry.body.note.split(' ').at(-1) ?? '';
      const event = byMessage.get(id);
      if (!event) continue;
      noteAt.set(id, at);
      if (event.complaint) {
        const queue = pendingHuman.get(event.conversationId) ?? [];
        queue.push(id);
        pendingHuman.set(event.conversationId, queue);
      } else lastCall.set(id, at);
    } else if (entry.endpoint === 'needHuman' && entry.body?.conversation_id) {
      const id = pendingHuman.get(entry.body.conversation_id)?.shift();
      if (id) lastCall.set(id, at);
    }
  }
  const latencies = accepted
    .map((e) => (lastCall.get(e.messageId) ?? Number.NaN) - e.sentAt)
    .filter((ms) => Number.isFinite(ms))
    .sort((a, b) => a - b);
  const lastAt = Math.max(...lastCall.values());
  const seconds = (lastAt - begin) / 1000;
  const acks = sent.map((e) => e.ackMs).sort((a, b) => a - b);
  return {
    phase,
    events: accepted.length,
    platformCalls: expectedCalls,
    eventsPerSecond: Math.round(accepted.length / seconds),
    callsPerSecond: Math.round(expectedCalls / seconds),
    acksPerSecond: Math.round(sent.length / ((acked - begin) / 1000)),
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    maxMs: Math.round(latencies.at(-1) ?? Number.NaN),
    ackP99Ms: Math.round(percentile(acks, 99) * 10) / 10,
    non200: sent.length - accepted.length,
    peakRssMb,
  };
}

export async function runE2eBench(): Promise<{
  layout: string;
  loadAtStart: number[];
  results: E2ePhaseResult[];
}> {
  const loadAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-bench-'));
  let redis: RedisServerHandle | undefined;
  const children: ChildProcess[] = [];
  try {
    redis = process.env.REDIS_URL ? undefined : await startRedisServer({ appendOnly: true });
    const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
    const seed = {
      conversations: Array.from({ length: CONVERSATIONS }, (_, i) => ({
        id: `bc-${i}`,
        channel: 'whatsapp_qr',
      })),
    };
    await writeFile(join(dir, 'seed.json'), JSON.stringify(seed));
    await writeFile(join(dir, 'bridge.yaml'), CONFIG);
    const emulatorPort = await findFreePort();
    const emulator = spawnNode(
      [
        CLI,
        'emulator',
        '--port',
        String(emulatorPort),
        '--business-id',
        'bench-biz',
        '--secret',
        SECRET,
        '--seed',
        join(dir, 'seed.json'),
        '--request-log-size',
        '1000000',
      ],
      {},
    );
    children.push(emulator.child);
    const emulatorUrl = `http://127.0.0.1:${emulatorPort}`;
    await waitUntilOk(`${emulatorUrl}/health`, `the emulator to start: ${emulator.output()}`);
    const port = await findFreePort();
    const env = {
      PLATFORM_BASE_URL: emulatorUrl,
      PORT: String(port),
      REDIS_URL: redisUrl,
      CONCURRENCY: String(CONCURRENCY),
    };
    const modes = LAYOUT === 'split' ? ['serve', 'work'] : ['start'];
    const bridges = modes.map((mode) =>
      spawnNode([...BRIDGE_NODE_ARGS, CLI, mode, '--config', join(dir, 'bridge.yaml')], env),
    );
    children.push(...bridges.map((b) => b.child));
    await waitUntilOk(
      `http://127.0.0.1:${port}/readyz`,
      `the bridge to be ready: ${bridges.map((b) => b.output()).join('\n')}`,
    );
    const ctx = {
      port,
      emulatorUrl,
      pids: bridges.map((b) => b.child.pid ?? 0),
      agent: new Agent({ keepAlive: true, maxSockets: SATURATION_IN_FLIGHT }),
      seq: { n: 0 },
    };
    // Warm-up: JIT, connections, scripts loaded.
    await runPhase('warmup', ctx, { rate: 100, count: 300 });
    const results = [
      await runPhase(`fixed-${FIXED_RATE}/s`, ctx, { rate: FIXED_RATE, count: FIXED_RATE * FIXED_SECONDS }),
      await runPhase('saturation', ctx, { count: SATURATION_EVENTS }),
    ];
    ctx.agent.destroy();
    return { layout: `${LAYOUT} (worker concurrency ${CONCURRENCY})`, loadAtStart, results };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function e2eTable(results: E2ePhaseResult[]): string {
  const rows = [
    [
      'phase',
      'events',
      'events/s',
      'calls/s',
      'acks/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'ack p99 ms',
      'non-200',
      'peak RSS MB',
    ],
    ...results.map((r) => [
      r.phase,
      r.events,
      r.eventsPerSecond,
      r.callsPerSecond,
      r.acksPerSecond,
      r.p50Ms,
      r.p99Ms,
      r.maxMs,
      r.ackP99Ms,
      r.non200,
      r.peakRssMb,
    ]),
  ].map((row) => row.map(String));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows.map((row) => row.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ')).join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const run = await runE2eBench();
  console.log(`end to end, layout ${run.layout}, load average at start ${run.loadAtStart.join(' ')}`);
  console.log(e2eTable(run.results));
  await mkdir(join(here, 'results'), { recursive: true });
  await writeFile(
    join(here, 'results', 'e2e.json'),
    `${JSON.stringify({ ...run, at: new Date().toISOString() }, null, 2)}\n`,
  );
}
