/**
 * `npm run bench:forget` (issue 27): what `forget --conversation` costs among 100,000 stored
 * conversations, and what it does to everyone else's Redis commands meanwhile.
 *
 * A private redis-server is filled as a busy bridge leaves it: 100,000 conversation hashes, one
 * recorded event each (`record:` on, the largest store), 10,000 failed and 10,000 completed batch
 * jobs (kept with `retention.done_events` set), 10,000 entries of BullMQ's event log, 10,000
 * pending timers, 1,000 dead letters and 1,000 quarantined bodies; the conversations forgotten
 * appear in every store. Then 20 conversations are forgotten one after the other while a probe
 * connection sends PING back to back (as the bridge's commands would wait behind forget's): the
 * probe's round trips during forget against the same probe idle, the longest single script
 * (SLOWLOG, threshold 0), and the wall time per forget (in process, and one through the CLI).
 *
 * Prints a table and writes bench/results/forget.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { forgetConversation } from '../src/privacy/forget-conversation.js';
import { createKeyLayout } from '../src/queue/key-layout.js';
import { startRedisServer } from '../src/redis/start-redis-server.js';
import { makeEvent } from '../test/support/make-event.js';
import { CLI, round, textTable } from './peers-support.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.FORGET_N ?? 100_000);
const JOBS = Math.min(10_000, N);
const SMALL = Math.min(1_000, N);
const SAMPLES = 20;
const prefix = 'bf';
const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
const shard = layout.all[0];
const keys = layout.global;
/** The p-quantile of unsorted values. */
const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};
const q = (queue: string, suffix: string) => `${prefix}:${queue}:${suffix}`;

const conversation = (i: number) => `628${String(1_000_000_000 + i)}`;
const eventOf = (i: number, n = 0) =>
  makeEvent({
    conversationId: conversation(i),
    messageId: `m-${i}-${n}`,
    text: `Halo kak, pesanan nomor INV-${i} belum sampai. Hubungi saya di 0812${String(i).padStart(8, '0')} atau pelanggan${i}@example.com ya, terima kasih banyak`,
    senderName: `Pelanggan ${i}`,
    conversationLabel: `Pelanggan ${i}`,
  });

async function fill(redis: Redis, targets: readonly number[]): Promise<void> {
  const isTarget = new Set(targets);
  const pick = (j: number) =>
    (isTarget.size > 0 && j % 97 === 0 ? (targets[j % targets.length] as number) : j * 7919) % N;
  for (let start = 0; start < N; start += 1000) {
    const pipe = redis.pipeline();
    for (let i = start; i < Math.min(N, start + 1000); i++) {
      const c = shard?.keys.conversation(conversation(i)) as string;
      pipe.hset(
        c,
        'lastIn',
        new Date().toISOString(),
        'firstIn',
        `channel.message_in|m-${i}-0`,
        'C:escalate',
        '1',
      );
      const event = eventOf(i);
      const line = {
        seq: i + 1,
        v: 1,
        now: event.receivedAt,
        event,
        facts: { lastIn: event.occurredAt },
        plan: { rules: ['escalate'], actions: [{ id: 'escalate#0', kind: 'note', text: 'Escalated' }] },
        redacted: [],
      };
      pipe.hset(keys.recordedEntries, `e${i}`, JSON.stringify(line));
      pipe.zadd(keys.recordedIndex, Date.now() - (N - i), `e${i}`);
    }
    await pipe.exec();
  }
  for (let start = 0; start < JOBS; start += 500) {
    const pipe = redis.pipeline();
    for (let j = start; j < Math.min(JOBS, start + 500); j++) {
      const batch = (k: number) => ({
        events: [0, 1, 2].map((n) => ({ arrival: j * 3 + n, event: eventOf(pick(j + k + n), n) })),
      });
      pipe.hset(
        q('events', `f-${j}`),
        'name',
        'events',
        'data',
        JSON.stringify(batch(0)),
        'failedReason',
        'boom',
        'attemptsMade',
        '8',
      );
      pipe.zadd(q('events', 'failed'), j, `f-${j}`);
      const done = batch(1);
      const returnvalue = {
        events: done.events.map((e) => ({
          eventKey: e.event.key,
          conversationId: e.event.conversationId,
          matched: [],
          actions: [],
        })),
        skipped: 0,
      };
      pipe.hset(
        q('events', `c-${j}`),
        'name',
        'events',
        'data',
        JSON.stringify(done),
        'returnvalue',
        JSON.stringify(returnvalue),
      );
      pipe.zadd(q('events', 'completed'), j, `c-${j}`);
      pipe.xadd(
        q('events', 'events'),
        '*',
        'event',
        'completed',
        'jobId',
        `c-${j}`,
        'returnvalue',
        JSON.stringify(returnvalue),
      );
      const t = pick(j + 5);
      pipe.hset(
        q('timers', `tm-${j}`),
        'name',
        'timer',
        'data',
        JSON.stringify({
          timerId: `tm-${j}`,
          conversationId: conversation(t),
          rule: 'escalate',
          unless: ['agent_reply'],
          actions: [],
          event: eventOf(t),
          dueAt: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
      pipe.zadd(q('timers', 'delayed'), Date.now() + 3_600_000, `tm-${j}`);
      pipe.hset(shard?.keys.conversation(conversation(t)) as string, `T:tm-${j}`, 'p:agent_reply');
    }
    await pipe.exec();
  }
  const pipe = redis.pipeline();
  for (let j = 0; j < SMALL; j++) {
    const i = pick(j + 11);
    const entry = {
      id: `d-${j}`,
      queue: 'events',
      jobId: `f-${j}`,
      jobName: 'events',
      reason: 'conversation not found',
      code: 'UNRECOVERABLE',
      attempts: 1,
      failedAt: new Date().toISOString(),
      conversationId: conversation(i),
      eventKey: `channel.message_in|m-${i}-0`,
      data: { events: [{ arrival: j, event: eventOf(i) }] },
      actions: [],
      replays: 0,
    };
    pipe.set(keys.dead(`d-${j}`), JSON.stringify(entry));
    pipe.zadd(keys.deadIndex, j, `d-${j}`);
    const k = pick(j + 13);
    const body = JSON.stringify({
      event: 'channel.message_reaction',
      conversation_id: conversation(k),
      message: { text: eventOf(k).text },
    });
    pipe.hset(
      keys.quarantineEntries,
      `q-${j}`,
      JSON.stringify({
        id: `q-${j}`,
        receivedAt: new Date().toISOString(),
        reason: 'unknown_event',
        message: 'unknown event',
        eventName: 'channel.message_reaction',
        conversationId: conversation(k),
        bodyBytes: body.length,
        truncated: false,
        body,
      }),
    );
    pipe.zadd(keys.quarantine, j, `q-${j}`);
  }
  await pipe.exec();
}

/** Back-to-back PINGs on their own connection until `stop()`; returns the round trips in ms. */
function probe(url: string) {
  const redis = new Redis(url);
  const rtts: number[] = [];
  let running = true;
  const done = (async () => {
    const deadline = Date.now() + 600_000;
    while (running && Date.now() < deadline) {
      const t0 = process.hrtime.bigint();
      await redis.ping();
      rtts.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      redis.disconnect();
      return rtts;
    },
  };
}

const summary = (rtts: number[]) => ({
  p50: round(percentile(rtts, 0.5), 3),
  p99: round(percentile(rtts, 0.99), 3),
  max: round(
    rtts.reduce((a, b) => Math.max(a, b), 0),
    3,
  ),
  count: rtts.length,
});

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const targets = Array.from({ length: SAMPLES }, (_, k) => Math.floor(((k + 0.5) * N) / SAMPLES));
    const t0 = Date.now();
    await fill(redis, targets);
    const keyCount = await redis.dbsize();
    const memory = /used_memory_human:(\S+)/.exec(await redis.info('memory'))?.[1];
    console.log(`filled ${keyCount} keys (${memory}) in ${Date.now() - t0} ms`);

    const idleProbe = probe(server.url);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idle = await idleProbe.stop();

    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '100000');
    await redis.slowlog('RESET');
    const busyProbe = probe(server.url);
    const walls: number[] = [];
    const erased: number[] = [];
    for (const i of targets.slice(0, SAMPLES - 1)) {
      const t = process.hrtime.bigint();
      const result = await forgetConversation(redis, layout, conversation(i), { waitMs: 5_000 });
      walls.push(Number(process.hrtime.bigint() - t) / 1e6);
      erased.push(Object.values(result.erased).reduce((a, b) => a + b, 0));
    }
    const busy = await busyProbe.stop();
    const slow = (await redis.slowlog('GET', 100_000)) as [number, number, number, string[]][];
    const longest =
      Math.max(...slow.filter((e) => e[3][0]?.toLowerCase().startsWith('eval')).map((e) => e[2])) / 1000;
    const scripts = slow.filter((e) => e[3][0]?.toLowerCase().startsWith('eval')).length;
    // Per script and first key: calls and longest call, to see which store costs what.
    const perScript = new Map<string, { calls: number; maxMs: number; totalMs: number }>();
    for (const [, , micros, args] of slow) {
      if (!args[0]?.toLowerCase().startsWith('eval')) continue;
      const name = `${(args[1] ?? '').slice(0, 8)} ${(args[3] ?? '').replace(/[0-9a-f]{32}|-\d+$/g, '*')}`;
      const entry = perScript.get(name) ?? { calls: 0, maxMs: 0, totalMs: 0 };
      entry.calls += 1;
      entry.maxMs = Math.max(entry.maxMs, micros / 1000);
      entry.totalMs += micros / 1000;
      perScript.set(name, entry);
    }
    for (const [name, e] of perScript)
      console.log(`${name}: ${e.calls} calls, max ${round(e.maxMs, 2)} ms, total ${round(e.totalMs, 1)} ms`);

    const last = conversation(targets[SAMPLES - 1] as number);
    const t = Date.now();
    const cli = spawnSync(
      process.execPath,
      [CLI, 'forget', '--redis-url', server.url, '--prefix', prefix, '--conversation', last],
      { encoding: 'utf8' },
    );
    const cliMs = Date.now() - t;
    if (cli.status !== 0) throw new Error(`forget CLI failed: ${cli.stderr}`);

    const rows = [
      ['stored', `${N} conversations, ${keyCount} keys, ${memory}`],
      [
        'forget, in process (19 conversations)',
        `median ${round(percentile(walls, 0.5), 1)} ms, max ${round(Math.max(...walls), 1)} ms`,
      ],
      ['entries erased per conversation', `median ${percentile(erased, 0.5)}, min ${Math.min(...erased)}`],
      ['forget through the CLI (1, with start-up)', `${cliMs} ms`],
      ['script calls per forget', `${round(scripts / walls.length, 0)}`],
      ['longest single script', `${round(longest, 2)} ms`],
      [
        'PING round trip idle (p50 / p99 / max)',
        `${summary(idle).p50} / ${summary(idle).p99} / ${summary(idle).max} ms`,
      ],
      [
        'PING round trip during forget',
        `${summary(busy).p50} / ${summary(busy).p99} / ${summary(busy).max} ms`,
      ],
    ];
    console.log(textTable([['forget among many conversations', ''], ...rows]));
    console.log(
      `machine: ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const out = join(here, 'results');
    await mkdir(out, { recursive: true });
    await writeFile(
      join(out, 'forget.json'),
      `${JSON.stringify({ n: N, keys: keyCount, memory, walls, erased, cliMs, longestScriptMs: longest, scriptsPerForget: scripts / walls.length, idle: summary(idle), busy: summary(busy) }, null, 2)}\n`,
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

await main();
