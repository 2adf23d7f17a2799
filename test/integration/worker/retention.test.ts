import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { BridgeConfig } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { receiverOptionsFromConfig } from '../../../src/receive/receiver-options.js';
import { storeRecordedEvent } from '../../../src/record/event-store.js';
import type { RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import { listDeadLetters } from '../../../src/worker/failures/dead-letters.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { createTimerScheduler, releaseTimer, timerIdFor } from '../../../src/worker/timers/timers.js';
import { makeEvent } from '../../support/make-event.js';
import { startRedisServer } from '../../support/redis.js';
import { postWebhook } from '../receive/webhook-client.js';

/**
 * Every store the bridge writes keeps what it holds only as long as `retention:`
 * says, by a Redis expiry on keys it writes anyway, a bounded trim when a store is written, or the
 * worker's bounded sweep of BullMQ's done and failed jobs. A real receiver and worker on a private
 * redis-server; the keys are read directly. Short retentions are whole seconds, waited on with
 * deadlines.
 */

const SECRET = 'wh-retention';
const RULES = `
rules:
  - name: greet
    on: message_in
    if: { text: { any_keywords: [ halo ] } }
    then: [ { note: "seen" } ]
  - name: remind
    on: message_in
    if: { text: { any_keywords: [ ingatkan ] } }
    then:
      - after: 4s
        then: [ { note: "reminder" } ]
  - name: follow-up
    on: ai_reply
    if: { text: { any_keywords: [ ingatkan ] } }
    then:
      - after: 4s
        then: [ { note: "ai follow-up" } ]
      - note: "ai noted"
      - note: "ai noted again"
  - name: much-later
    on: message_in
    if: { text: { any_keywords: [ nanti ] } }
    then:
      - after: 3d
        then: [ { note: "three days later" } ]
  - name: broken
    on: message_in
    if: { text: { any_keywords: [ gagal ] } }
    then: [ { note: "this note fails" } ]
`;

let server: RedisServerHandle;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await server.stop();
});

interface World {
  config: BridgeConfig;
  prefix: string;
  url: string;
  notes: string[];
  worker: BridgeWorker;
  receiver: Receiver;
  warnings: string[];
}

let world: World | undefined;
afterEach(async () => {
  await world?.receiver.close();
  await world?.worker.close(0);
  world = undefined;
});

/**
 * A receiver and a worker from a config whose `retention:` (and other sections) is `extra`, and
 * with `receiverExtra` in its `receiver:` section.
 */
async function startWorld(extra = '', receiverExtra = ''): Promise<World> {
  const prefix = `ret-${randomBytes(4).toString('hex')}`;
  const text = `platform: { base_url: "https://platform.invalid", auth: { business_id: b, secret: s } }
receiver: { secrets: [ ${SECRET} ]${receiverExtra} }
redis: { url: "${server.url}", prefix: ${prefix} }
worker: { attempts: 1 }
${extra}
${RULES}`;
  const { config, rules, warnings } = parseConfigText(text, { fileName: 'retention.yaml', env: {} });
  const notes: string[] = [];
  const platform: PlatformPort = {
    async addNote(conversationId, note) {
      if (note === 'this note fails') throw new Error('the platform is down for this note');
      notes.push(`${conversationId}: ${note}`);
      return {};
    },
    sendMessage: async () => ({}),
    markNeedHuman: async () => undefined,
    async *history() {},
  };
  const worker = createBridgeWorker({
    topology: config.redis.topology,
    prefix,
    platform,
    classifyPlatformError: () => undefined,
    forwarder: { forward: async () => ({ status: 200 }) },
    rules: () => rulesPort(rules),
    settings: config.worker,
    retention: config.retention,
    story: config.story,
  });
  await worker.start();
  const receiver = createReceiver(receiverOptionsFromConfig(config));
  const url = `${(await receiver.listen()).url}${config.receiver.path}`;
  world = { config, prefix, url, notes, worker, receiver, warnings: warnings.map((w) => w.message) };
  return world;
}

/** A customer message (or, with `event`, another message event) as the platform delivers it. */
function message(
  conversationId: string,
  text: string,
  messageId = `m-${randomBytes(5).toString('hex')}`,
  event = 'channel.message_in',
) {
  return JSON.stringify({
    event,
    timestamp: Math.floor(Date.now() / 1000),
    conversation_id: conversationId,
    conversation_label: 'Budi Santoso',
    message: {
      id: messageId,
      sender_name: 'Budi Santoso',
      channel: { id: 'ch_wa_1', name: 'WhatsApp', engine: 'wa' },
      content: { type: 'text', text },
    },
  });
}

async function post(w: World, body: string): Promise<void> {
  const answer = await postWebhook(w.url, body, {
    'content-type': 'application/json',
    authorization: SECRET,
  });
  expect(answer.status).toBe(200);
}

/** Every key under a prefix (the private server holds nothing else). */
async function keysUnder(prefix: string): Promise<string[]> {
  return (await redis.keys(`${prefix}:*`)).sort();
}

/**
 * BullMQ's job hashes of a queue, found by what they are (a hash under `<prefix>:<queue>:` with a
 * `data` field) rather than by the shape of their ids, so a change of job ids cannot make a check
 * of "no job hash left" pass on nothing. `keeps a done job for done_events` sees this find one.
 */
async function jobHashes(prefix: string, queue: 'events' | 'timers'): Promise<string[]> {
  const found: string[] = [];
  for (const key of await redis.keys(`${prefix}:${queue}:*`)) {
    if ((await redis.type(key)) === 'hash' && (await redis.hexists(key, 'data')) === 1) found.push(key);
  }
  return found.sort();
}

const seconds = (key: string) => redis.ttl(key);

describe('retention defaults (no retention: section)', () => {
  it('keeps nothing of a done event: no job hash, no completed entry, no conversation id in the event stream', async () => {
    const w = await startWorld();
    const conversations = ['conv-default-a', 'conv-default-b', 'conv-default-c'];
    for (const c of conversations) await post(w, message(c, 'halo kak'));
    await waitFor(() => w.notes.length === 3, { timeoutMs: 10_000, what: 'the three notes' });
    await waitFor(async () => (await w.worker.eventsQueue.getActiveCount()) === 0, {
      timeoutMs: 5_000,
      what: 'the jobs to finish',
    });
    expect(await jobHashes(w.prefix, 'events')).toEqual([]);
    expect(await redis.zcard(`${w.prefix}:events:completed`)).toBe(0);
    // What readiness counts instead of the completed set.
    expect(w.worker.finishedJobs()).toBeGreaterThanOrEqual(1);
    // The event stream names jobs, never the conversations (issue 27): nothing in it names one.
    const stream = JSON.stringify(await redis.xrange(`${w.prefix}:events:events`, '-', '+'));
    expect(stream).toContain('completed');
    for (const c of conversations) expect(stream).not.toContain(c);
    expect(await redis.hget(`${w.prefix}:events:meta`, 'opts.maxLenEvents')).toBe('100');
    expect(await redis.hget(`${w.prefix}:timers:meta`, 'opts.maxLenEvents')).toBe('100');
  });

  it('gives every store its default expiry: conversation 30d, dedupe 72h, quarantine 30d, dead letter 30d', async () => {
    const w = await startWorld();
    const keys = bridgeKeys(w.prefix);
    const messageId = 'm-default-ttls';
    await post(w, message('conv-ttl', 'halo', messageId));
    await post(w, message('conv-dead', 'gagal'));
    await post(w, JSON.stringify({ event: 'channel.something_new', conversation_id: 'conv-q' }));
    await waitFor(() => w.notes.length === 1, { timeoutMs: 10_000, what: 'the note' });
    await waitFor(async () => (await listDeadLetters(redis, keys)).length === 1, {
      timeoutMs: 10_000,
      what: 'the dead letter',
    });
    const day = 86_400;
    expect(await seconds(keys.conversation('conv-ttl'))).toBeGreaterThan(30 * day - 60);
    expect(await seconds(keys.conversation('conv-ttl'))).toBeLessThanOrEqual(30 * day);
    expect(await seconds(keys.dedupe(`channel.message_in|${messageId}`))).toBeGreaterThan(72 * 3600 - 60);
    expect(await seconds(keys.dedupe(`channel.message_in|${messageId}`))).toBeLessThanOrEqual(72 * 3600);
    for (const key of [keys.quarantine, keys.quarantineEntries]) {
      expect(await seconds(key)).toBeGreaterThan(30 * day - 60);
      expect(await seconds(key)).toBeLessThanOrEqual(30 * day);
    }
    const [letter] = await listDeadLetters(redis, keys);
    const deadTtl = await seconds(keys.dead(letter?.id ?? ''));
    expect(deadTtl).toBeGreaterThan(30 * day - 60);
    expect(deadTtl).toBeLessThanOrEqual(30 * day);
    expect(await seconds(keys.deadIndex)).toBeGreaterThan(30 * day - 60);
    // The run state a replay needs outlives its dead letter (store-ttls.ts).
    expect(await seconds(keys.run(letter?.eventKey ?? ''))).toBeGreaterThanOrEqual(deadTtl);
    // The failed job itself is kept 7 days (its data is in the dead letter too).
    expect(await redis.zcard(`${w.prefix}:events:failed`)).toBe(1);
  });
});

describe('retention configured short (seconds)', () => {
  const SHORT = `retention:
  done_events: 2s
  failed_events: 2s
  dead_letters: 3s
  quarantine: 2s
  conversations: 2s
  dedupe: 1m
  event_stream: 5`;

  it('keeps a done job for done_events, then the sweep removes it although no other job finishes', async () => {
    const w = await startWorld(SHORT);
    await post(w, message('conv-done', 'halo'));
    await waitFor(() => w.notes.length === 1, { timeoutMs: 10_000, what: 'the note' });
    await waitFor(async () => (await redis.zcard(`${w.prefix}:events:completed`)) === 1, {
      timeoutMs: 5_000,
      what: 'the completed job',
    });
    expect(await jobHashes(w.prefix, 'events')).toHaveLength(1);
    // A quiet bridge: BullMQ alone would keep it until another job completes.
    await waitFor(async () => (await jobHashes(w.prefix, 'events')).length === 0, {
      timeoutMs: 8_000,
      what: 'the done job to be swept',
    });
    expect(await redis.zcard(`${w.prefix}:events:completed`)).toBe(0);
  });

  it('expires the failed job, the dead letter and its run state as configured, the run state no sooner', async () => {
    const w = await startWorld(SHORT);
    const keys = bridgeKeys(w.prefix);
    await post(w, message('conv-fails', 'gagal'));
    await waitFor(async () => (await redis.zcard(keys.deadIndex)) === 1, {
      timeoutMs: 10_000,
      what: 'the dead letter',
    });
    const [letter] = await listDeadLetters(redis, keys);
    const dead = keys.dead(letter?.id ?? '');
    const run = keys.run(letter?.eventKey ?? '');
    expect(await seconds(dead)).toBeLessThanOrEqual(3);
    expect(await seconds(run)).toBeGreaterThanOrEqual(await seconds(dead));
    await waitFor(async () => (await redis.exists(dead, keys.deadIndex)) === 0, {
      timeoutMs: 8_000,
      what: 'the dead letter and its index to expire',
    });
    await waitFor(async () => (await redis.zcard(`${w.prefix}:events:failed`)) === 0, {
      timeoutMs: 8_000,
      what: 'the failed job to be swept',
    });
    expect(await jobHashes(w.prefix, 'events')).toEqual([]);
  });

  it('forgets a conversation `conversations` after its last customer message', async () => {
    const w = await startWorld(SHORT);
    const keys = bridgeKeys(w.prefix);
    const first = Date.now();
    await post(w, message('conv-quiet', 'halo'));
    await waitFor(() => w.notes.length === 1, { timeoutMs: 10_000, what: 'the first note' });
    expect(await redis.exists(keys.conversation('conv-quiet'))).toBe(1);
    expect(await seconds(keys.conversation('conv-quiet'))).toBeLessThanOrEqual(2);
    // A second message well inside the first one's 2 s: the expiry counts from it, not the first.
    await waitFor(() => Date.now() - first >= 1_200, {
      timeoutMs: 5_000,
      what: '1.2 s after the first message',
    });
    await post(w, message('conv-quiet', 'halo lagi'));
    await waitFor(() => w.notes.length === 2, { timeoutMs: 10_000, what: 'the second note' });
    const second = Date.now();
    await waitFor(() => Date.now() - first >= 2_600, {
      timeoutMs: 5_000,
      what: 'past the expiry of the first message',
    });
    expect(await redis.exists(keys.conversation('conv-quiet'))).toBe(1);
    await waitFor(async () => (await redis.exists(keys.conversation('conv-quiet'))) === 0, {
      timeoutMs: 6_000,
      what: 'the conversation hash to expire',
    });
    // Not before two seconds after the last message (whole seconds: allow Redis's rounding).
    expect(Date.now() - second).toBeGreaterThanOrEqual(1_000);
  });

  it('fires a pending timer that is due later than `conversations`', async () => {
    const w = await startWorld(SHORT);
    const keys = bridgeKeys(w.prefix);
    const started = Date.now();
    // A customer message (its run gives the conversation its expiry first), and an AI reply that
    // is the first event of its conversation (the run's end gives the new hash its expiry).
    await post(w, message('conv-timer', 'ingatkan saya'));
    await post(w, message('conv-ai-timer', 'saya ingatkan besok', undefined, 'ai.message_generated'));
    const registered = async (c: string) =>
      (await redis.hkeys(keys.conversation(c))).some((f) => f.startsWith('T:'));
    await waitFor(async () => (await registered('conv-timer')) && (await registered('conv-ai-timer')), {
      timeoutMs: 5_000,
      what: 'the timer registrations',
    });
    // A timer due in 3 days, then one due in 4 s, in one conversation: the shorter one never
    // shortens the expiry the longer one needs.
    await post(w, message('conv-two-timers', 'nanti saja'));
    await waitFor(async () => await registered('conv-two-timers'), { timeoutMs: 5_000, what: '3d timer' });
    await post(w, message('conv-two-timers', 'ingatkan saya'));
    const timers = async (c: string) =>
      (await redis.hkeys(keys.conversation(c))).filter((f) => f.startsWith('T:')).length;
    await waitFor(async () => (await timers('conv-two-timers')) === 2, {
      timeoutMs: 5_000,
      what: 'the second timer',
    });
    expect(await redis.pttl(keys.conversation('conv-two-timers'))).toBeGreaterThan(3 * 86_400_000);
    // Past `conversations` (2 s), before the timers (4 s): the registrations are still there.
    await waitFor(() => Date.now() - started > 3_000, { timeoutMs: 5_000, what: '3 s' });
    expect(await registered('conv-timer')).toBe(true);
    expect(await registered('conv-ai-timer')).toBe(true);
    await waitFor(
      () => w.notes.includes('conv-timer: reminder') && w.notes.includes('conv-ai-timer: ai follow-up'),
      { timeoutMs: 10_000, what: 'both timers to fire' },
    );
    // The fired timers' jobs are gone too (done_events: 2s, then the sweep); the 3-day one waits.
    await waitFor(async () => (await jobHashes(w.prefix, 'timers')).length === 1, {
      timeoutMs: 8_000,
      what: "the fired timers' jobs to go",
    });
    expect(await redis.zcard(`${w.prefix}:timers:delayed`)).toBe(1);
  });

  it('drops quarantined bodies `quarantine` after the last new one', async () => {
    const w = await startWorld(SHORT);
    const keys = bridgeKeys(w.prefix);
    await post(w, JSON.stringify({ event: 'channel.something_new', conversation_id: 'conv-q' }));
    expect(await redis.zcard(keys.quarantine)).toBe(1);
    expect(await seconds(keys.quarantineEntries)).toBeLessThanOrEqual(2);
    await waitFor(async () => (await redis.exists(keys.quarantine, keys.quarantineEntries)) === 0, {
      timeoutMs: 6_000,
      what: 'the quarantine to expire',
    });
  });

  it('keeps dedupe markers for retention.dedupe', async () => {
    const w = await startWorld(SHORT);
    await post(w, message('conv-dedupe', 'apa kabar', 'm-dedupe-1'));
    const ttl = await seconds(bridgeKeys(w.prefix).dedupe('channel.message_in|m-dedupe-1'));
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('bounds the event stream to about event_stream entries (Redis trims whole blocks of ~100)', async () => {
    const w = await startWorld(SHORT);
    expect(await redis.hget(`${w.prefix}:events:meta`, 'opts.maxLenEvents')).toBe('5');
    for (let i = 0; i < 60; i++) await post(w, message(`conv-stream-${i % 6}`, 'apa kabar'));
    await waitFor(async () => (await w.worker.eventsQueue.getJobCountByTypes('waiting', 'active')) === 0, {
      timeoutMs: 20_000,
      what: 'the 60 jobs to finish',
    });
    // 60 jobs write some 240 entries (added, waiting, active, completed...): BullMQ's default
    // (10,000) would keep them all.
    expect(await redis.xlen(`${w.prefix}:events:events`)).toBeLessThanOrEqual(110);
  });
});

describe('a timer is set once although its done job is not kept (exactly once, issue 27)', () => {
  // BullMQ's job id alone used to stop a run cut off after setting a timer from setting it again:
  // the completed job was kept an hour. With done jobs removed, the timer records `started` once
  // registered, and a run that finds it keeps a registration that is there but makes no new one.
  const eventKey = 'channel.message_in|m-resume';
  const seedCutOffRun = async (w: World) => {
    const started = JSON.stringify({ state: 'started', at: Date.now() - 60_000, tries: 1 });
    await redis.hset(bridgeKeys(w.prefix).run(eventKey), 'a:remind#0', started);
  };

  it('a run that finds the timer `started` and no registration (fired since, job gone) does not set it again', async () => {
    const w = await startWorld();
    const keys = bridgeKeys(w.prefix);
    await seedCutOffRun(w);
    await post(w, message('conv-resume', 'ingatkan saya', 'm-resume'));
    await waitFor(
      async () =>
        (await redis.exists(keys.dedupe(eventKey))) === 1 && (await redis.exists(keys.run(eventKey))) === 0,
      { timeoutMs: 10_000, what: 'the run to finish' },
    );
    expect(await redis.zcard(`${w.prefix}:timers:delayed`)).toBe(0);
    expect((await redis.hkeys(keys.conversation('conv-resume'))).filter((f) => f.startsWith('T:'))).toEqual(
      [],
    );
  });

  it('a run that finds the timer `started` and its registration (cut off before the job was added) adds it', async () => {
    const w = await startWorld();
    const keys = bridgeKeys(w.prefix);
    await seedCutOffRun(w);
    const timerId = timerIdFor(eventKey, 'remind#0');
    await redis.hset(keys.conversation('conv-resume'), `T:${timerId}`, 'p:');
    await post(w, message('conv-resume', 'ingatkan saya', 'm-resume'));
    await waitFor(async () => (await redis.zcard(`${w.prefix}:timers:delayed`)) === 1, {
      timeoutMs: 10_000,
      what: 'the timer job',
    });
    expect(await redis.zrange(`${w.prefix}:timers:delayed`, 0, -1)).toEqual([timerId]);
  });

  it('a first run records `started` durably before the timer job exists', async () => {
    const keys = bridgeKeys(`ret-sched-${randomBytes(3).toString('hex')}`);
    const queue = new Queue('timers', { connection: redis, prefix: keys.queuePrefix });
    try {
      const scheduler = createTimerScheduler(redis, keys, queue, () => new Date(), 2);
      const input = {
        timerId: 'tm-sched-1',
        conversationId: 'conv-sched',
        delayMs: 60_000,
        unless: [],
        actions: [],
        event: makeEvent({ conversationId: 'conv-sched' }),
        rule: 'r',
      };
      let jobAtRegistration: unknown = 'not called';
      const first = await scheduler.schedule({
        ...input,
        onRegistered: async () => {
          jobAtRegistration = (await queue.getJob('tm-sched-1')) ?? null;
        },
      });
      expect(first).toBe('scheduled');
      expect(jobAtRegistration).toBeNull();
      // The registration keeps the hash past the due time, however short `conversations` (2 s).
      expect(await redis.pttl(keys.conversation('conv-sched'))).toBeGreaterThan(60_000);
      // Fired and done: registration released, job removed. A resumed run sets nothing.
      await releaseTimer(redis, keys, 'conv-sched', 'tm-sched-1');
      await queue.remove('tm-sched-1');
      expect(await scheduler.schedule({ ...input, resumed: true })).toBe('gone');
      expect(await queue.getJob('tm-sched-1')).toBeUndefined();
      expect(await redis.hexists(keys.conversation('conv-sched'), 'T:tm-sched-1')).toBe(0);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await redis.del(keys.conversation('conv-sched'));
    }
  });
});

describe('old key names', () => {
  it('receiver.dedupe_window still sets the dedupe markers, with a warning naming retention.dedupe', async () => {
    const w = await startWorld('', ', dedupe_window: 3m');
    expect(w.warnings).toEqual([
      'receiver.dedupe_window is an old name: write it as retention.dedupe (read as that for now; both at once are refused)',
      "receiver.dedupe_window (3m) is shorter than the platform's redeliveries (up to 5m): a duplicate that arrives later is taken as new, and its rules may act twice; keep it at 5m or more",
    ]);
    await post(w, message('conv-old-dedupe', 'apa kabar', 'm-old-dedupe'));
    const ttl = await seconds(bridgeKeys(w.prefix).dedupe('channel.message_in|m-old-dedupe'));
    expect(ttl).toBeGreaterThan(170);
    expect(ttl).toBeLessThanOrEqual(180);
  });
});

describe('recorded events', () => {
  it('expire retention.recorded_events after the last write, by the key TTL', async () => {
    const keys = bridgeKeys(`ret-rec-${randomBytes(3).toString('hex')}`);
    const now = new Date().toISOString();
    await storeRecordedEvent(
      redis,
      keys,
      {
        v: 1,
        now,
        event: { key: 'channel.message_in|m-rec', conversationId: 'conv-rec' } as never,
        facts: {} as never,
        plan: { matched: [], actions: [], blockedReplies: [] } as never,
        redacted: [],
      },
      { maxAgeMs: 1_500, maxCount: 100 },
    );
    expect(await redis.pttl(keys.recordedEntries)).toBeLessThanOrEqual(1_500);
    expect(await redis.pttl(keys.recordedIndex)).toBeGreaterThan(0);
    await waitFor(async () => (await redis.exists(keys.recordedIndex, keys.recordedEntries)) === 0, {
      timeoutMs: 5_000,
      what: 'the recorded events to expire',
    });
  });
});

describe('the quarantine trims by age as it is written (bounded, no scan)', () => {
  it('drops entries older than the max age when a new one is added', async () => {
    const keys = bridgeKeys(`ret-qt-${randomBytes(3).toString('hex')}`);
    const store = { redis, keys, maxAgeSeconds: 60 };
    const input = (body: string, receivedAt: Date) => ({
      reason: 'unknown_event' as const,
      message: 'test',
      eventName: 'x',
      conversationId: null,
      rawBody: Buffer.from(body),
      receivedAt,
    });
    const old = await quarantineBody(store, input('{"old":1}', new Date(Date.now() - 120_000)));
    expect(await redis.zcard(keys.quarantine)).toBe(1);
    await quarantineBody(store, input('{"new":1}', new Date()));
    expect(await redis.zrange(keys.quarantine, 0, -1)).not.toContain(old.entry.id);
    expect(await redis.hexists(keys.quarantineEntries, old.entry.id)).toBe(0);
    expect(await redis.zcard(keys.quarantine)).toBe(1);
    await redis.del(keys.quarantine, keys.quarantineEntries);
  });
});

describe('nothing is left under the prefix but what retention keeps', () => {
  it('lists the keys a default bridge (with stories on) leaves after one message', async () => {
    const w = await startWorld('story: { enabled: true }');
    await post(w, message('conv-keys', 'halo'));
    await waitFor(() => w.notes.length === 1, { timeoutMs: 10_000, what: 'the note' });
    await waitFor(async () => (await w.worker.eventsQueue.getActiveCount()) === 0, {
      timeoutMs: 5_000,
      what: 'the job to finish',
    });
    const keys = await keysUnder(w.prefix);
    const kinds = keys.map((key) =>
      key
        .slice(w.prefix.length + 1)
        .replace(/:[0-9a-f]{32,}$/, ':<hash>')
        .replace(/:stats:\d+$/, ':stats:<hour>'),
    );
    // Exactly these of the bridge's own: one more key family left behind fails here.
    expect([...new Set(kinds.filter((kind) => kind.startsWith('bridge:')))]).toEqual([
      'bridge:arrival',
      'bridge:conv:<hash>',
      'bridge:dedupe:<hash>',
      // The conversation's story (story.enabled): each expires (retention.stories).
      'bridge:story:<hash>',
      'bridge:story:index',
      'bridge:story:meta:<hash>',
      'bridge:story:stats:<hour>',
      'bridge:story:term:<hash>',
    ]);
    for (const key of keys.filter((k) => k.includes(':bridge:story:'))) {
      expect(await redis.pttl(key), key).toBeGreaterThan(0);
    }
    // BullMQ's bookkeeping of the two queues, bounded in size, and no job of either.
    const bullmq = kinds.filter((kind) => !kind.startsWith('bridge:'));
    expect(bullmq).toContain('events:events');
    for (const kind of bullmq)
      expect(kind).toMatch(/^(events|timers):(events|id|limiter|meta|stalled-check|marker)$/);
    expect(await jobHashes(w.prefix, 'events')).toEqual([]);
    expect(await jobHashes(w.prefix, 'timers')).toEqual([]);
  });
});
