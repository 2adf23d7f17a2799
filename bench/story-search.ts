/**
 * `npm run bench:story-search`: how fast the conversations' stories answer a search among 100,000
 * stored conversations (goal: p99 under 200 ms), one private redis-server.
 *
 * The server is filled as the worker's finish step fills it (the same Lua, story/story-lua.ts, with
 * entries built by story/build-story-write.ts): STORY_N conversations (default 100,000) of 3 events
 * each; each customer wrote a phone number and an e-mail address and has a name of two words from
 * a small list (so a name word is shared by thousands); a third matched `escalate`, a tenth were
 * tagged `vip`. Then each kind of search runs SAMPLES times (a phone number written another way, an
 * e-mail address, a conversation id, a shared name word, a rule, an outcome, a tag AND a rule,
 * the unfiltered list, a second page) and its p50/p99 are printed, and written to
 * bench/results/story-search.json.
 *
 * STORY_N=2000 npm run bench:story-search   (a quick check that it works)
 * STORY_PORT: the server's port (default: a free one).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { parseStorySettings } from '../src/config/config-schema.js';
import { createKeyLayout } from '../src/queue/key-layout.js';
import { startRedisServer } from '../src/redis/start-redis-server.js';
import { buildEventStory } from '../src/story/build-story-write.js';
import { STORY_ALONE_LUA, storyScriptInput } from '../src/story/story-lua.js';
import { createStoryReader } from '../src/story/story-reader.js';
import type { StoryQuery } from '../src/story/story-schema.js';
import { makeEvent } from '../test/support/make-event.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.STORY_N ?? 100_000);
const SAMPLES = Number(process.env.STORY_SAMPLES ?? 200);
const RETENTION_MS = 30 * 86_400_000;
const FIRST = ['Siti', 'Budi', 'Agus', 'Dewi', 'Rina', 'Joko', 'Sri', 'Andi', 'Putri', 'Eko'];
const LAST = ['Aminah', 'Santoso', 'Wijaya', 'Lestari', 'Pratama', 'Saputra', 'Hidayat', 'Kurniawan'];

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};
const conversation = (i: number) => `c-${i}`;
const phone = (i: number) => `0812${String(i).padStart(8, '0')}`;
const settings = parseStorySettings();

async function fill(redis: Redis, layout: ReturnType<typeof createKeyLayout>): Promise<void> {
  const sha = (await redis.script('LOAD', STORY_ALONE_LUA)) as string;
  const now = Date.now() - 3_600_000;
  for (let start = 0; start < N; start += 500) {
    const pipe = redis.pipeline();
    for (let i = start; i < Math.min(N, start + 500); i++) {
      const id = conversation(i);
      const keys = layout.shardOf(id).keys;
      for (let e = 0; e < 3; e++) {
        const at = now + i * 10 + e;
        const escalate = i % 3 === 0 && e === 2;
        const write = buildEventStory(
          {
            event: makeEvent({
              conversationId: id,
              messageId: `m-${i}-${e}`,
              senderName: `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]}`,
              text:
                e === 0 ? `halo, nomor saya ${phone(i)}, email pelanggan${i}@example.com` : 'pesanan saya?',
            }),
            now: at,
            actions: escalate
              ? [{ id: 'escalate#1', rule: 'escalate', type: 'need_human' }]
              : i % 10 === 0 && e === 1
                ? [{ id: 'vip#0', rule: 'vip', type: 'tag', tags: ['vip'], forMs: null }]
                : [],
            matched: escalate ? ['escalate'] : i % 10 === 0 && e === 1 ? ['vip'] : [],
            reports: escalate
              ? [{ id: 'escalate#1', type: 'need_human', rule: 'escalate', state: 'done' }]
              : i % 10 === 0 && e === 1
                ? [{ id: 'vip#0', type: 'tag', rule: 'vip', state: 'done' }]
                : [],
            cancelledTimers: [],
            windowApplies: true,
            windowOpenUntil: new Date(at + 86_400_000),
            attempts: 1,
            ownSend: false,
          },
          settings,
        );
        const input = storyScriptInput(keys, id, write, {
          now: at,
          ttlMs: RETENTION_MS,
          maxEntries: settings.maxEntries,
          events: 1,
        });
        pipe.evalsha(sha, input.keys.length, ...input.keys, ...input.args);
      }
    }
    const results = (await pipe.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}

async function main(): Promise<void> {
  const server = await startRedisServer(
    process.env.STORY_PORT ? { port: Number(process.env.STORY_PORT) } : {},
  );
  const redis = new Redis(server.url);
  try {
    const layout = createKeyLayout({ prefix: 'bs', shards: 1, tagged: false });
    const filling = Date.now();
    await fill(redis, layout);
    const fillMs = Date.now() - filling;
    const reader = createStoryReader({
      redis,
      layoutOf: () => layout,
      retentionMs: RETENTION_MS,
    });
    const pick = (k: number) => (k * 7919) % N;
    const first = await reader.search('default', {}, { limit: 50 });
    const searches: [string, (k: number) => StoryQuery, string | null][] = [
      [
        'phone written another way',
        (k) => ({ q: `+62 812-${phone(pick(k)).slice(4, 8)}-${phone(pick(k)).slice(8)}` }),
        null,
      ],
      ['e-mail address', (k) => ({ q: `Pelanggan${pick(k)}@Example.com` }), null],
      ['conversation id', (k) => ({ q: conversation(pick(k)) }), null],
      ['name word shared by ~1/10', (k) => ({ q: FIRST[k % FIRST.length] as string }), null],
      ['full name', (k) => ({ q: `${FIRST[k % FIRST.length]} ${LAST[k % LAST.length]}` }), null],
      ['rule (1/3 of all)', () => ({ rule: 'escalate' }), null],
      ['outcome escalated', () => ({ outcome: 'escalated' }), null],
      ['tag vip AND rule escalate', () => ({ tag: 'vip', rule: 'escalate' }), null],
      ['everything (first page)', () => ({}), null],
      ['everything (second page)', () => ({}), first.cursor],
      ['rule, last 10 minutes', () => ({ rule: 'escalate', since: Date.now() - 600_000 }), null],
    ];
    const rows: { search: string; p50Ms: number; p99Ms: number; answers: number }[] = [];
    for (const [name, query, cursor] of searches) {
      const times: number[] = [];
      let answers = 0;
      for (let k = 0; k < SAMPLES; k++) {
        const t = performance.now();
        const page = await reader.search('default', query(k), { limit: 50, cursor });
        times.push(performance.now() - t);
        answers = page.conversations.length;
      }
      rows.push({
        search: name,
        p50Ms: Math.round(percentile(times, 0.5) * 100) / 100,
        p99Ms: Math.round(percentile(times, 0.99) * 100) / 100,
        answers,
      });
    }
    const memory = String(await redis.info('memory')).match(/used_memory:(\d+)/)?.[1];
    const result = { conversations: N, samples: SAMPLES, fillMs, usedMemoryBytes: Number(memory), rows };
    console.table(rows);
    console.log(
      `filled ${N} conversations (3 events each) in ${fillMs} ms; Redis used ${Math.round(Number(memory) / 1e6)} MB`,
    );
    await mkdir(join(here, 'results'), { recursive: true });
    await writeFile(join(here, 'results', 'story-search.json'), `${JSON.stringify(result, null, 1)}\n`);
    const worst = Math.max(...rows.map((r) => r.p99Ms));
    if (worst >= 200) {
      console.log(`p99 of the slowest search: ${worst} ms (goal: under 200 ms)`);
      process.exitCode = 1;
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

await main();
