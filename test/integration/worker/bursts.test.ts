import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseWorkerSettings } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { ingestBatch } from '../../../src/queue/ingest-event.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import {
  burstArg,
  burstField,
  claimBurst,
  parseBurstRegistration,
} from '../../../src/worker/bursts/burst-store.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { prepareEvents } from '../../../src/worker/processor/prepare-run.js';
import { DEFAULT_STORE_TTLS } from '../../../src/worker/store-ttls.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const CONFIG = (debounce: string, extra = '') => `
platform: { base_url: "https://platform.invalid", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: answer-once
    on: message_in
    debounce: ${debounce}
${extra}    unless: agent_reply
    then: [ { reply: { text: "{{burst.count}} pesan: {{burst.text}}" } } ]
  - name: per-message
    on: message_in
    then: [ { note: "seen {{event.text}}" } ]
`;

describe('bursts in Redis: the prepare script and the claim (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    await deleteKeys(redis, prefix);
  });

  const settings = { debounceMs: 1_000, maxWaitMs: 5_000, unless: ['agent_reply' as const] };
  const rules = [{ rule: 'answer-once', settings }];

  async function prepare(event: ConversationEvent) {
    const keys = bridgeKeys(prefix);
    const burst = burstArg(event, rules);
    const [outcome] = await prepareEvents(redis, keys, {
      jobId: 'j',
      jobKeyPrefix: `${prefix}:events:`,
      failedSet: `${prefix}:events:failed`,
      now: Date.now(),
      ghostGraceMs: 30_000,
      // Skips the order gate: these runs test what the script does once it is an event's turn.
      replay: true,
      ttls: DEFAULT_STORE_TTLS,
      events: [{ event, member: `j|${event.key}`, ...(burst ? { burst } : {}) }],
    });
    if (!outcome || !('state' in outcome)) throw new Error('not prepared');
    return outcome;
  }
  const registration = async () =>
    parseBurstRegistration(
      await redis.hget(bridgeKeys(prefix).conversation('c1'), burstField('answer-once')),
    );

  it('a message begins a burst, a run again of it changes nothing, the next joins; an agent reply cancels', async () => {
    prefix = uniqueName('t-burst-lua');
    const t0 = Date.now();
    const first = makeEvent({ conversationId: 'c1', text: 'halo', receivedAt: new Date(t0).toISOString() });
    const begun = await prepare(first);
    expect(begun.startedBursts).toHaveLength(1);
    const id = begun.startedBursts[0]?.burstId;
    // A run of the same message again (after a crash) changes nothing, and says again that it began the burst.
    expect((await prepare(first)).startedBursts).toEqual(begun.startedBursts);
    const second = makeEvent({
      conversationId: 'c1',
      text: 'mau tanya',
      receivedAt: new Date(t0 + 300).toISOString(),
    });
    expect((await prepare(second)).startedBursts).toEqual([]);
    await prepare(second);
    const open = await registration();
    expect(open).toMatchObject({ state: 'pending', unless: ['agent_reply'] });
    if (open?.state !== 'pending') throw new Error('no pending burst');
    expect(open.stored.id).toBe(id);
    expect(open.burst).toMatchObject({ count: 2, texts: ['halo', 'mau tanya'], firstEventKey: first.key });
    expect(open.burst.lastEvent.key).toBe(second.key);
    const agent = await prepare(
      makeEvent({ conversationId: 'c1', kind: 'agent_reply', name: 'agent.message_out' }),
    );
    expect(agent.cancelledTimers).toEqual([id]);
    expect(await registration()).toBeUndefined();
  });

  it('the claim waits for the quiet period, then takes the burst; a message run again after it does not begin another', async () => {
    prefix = uniqueName('t-burst-claim');
    const keys = bridgeKeys(prefix);
    const t0 = Date.now();
    const first = makeEvent({ conversationId: 'c1', text: 'a', receivedAt: new Date(t0).toISOString() });
    const last = makeEvent({ conversationId: 'c1', text: 'b', receivedAt: new Date(t0 + 400).toISOString() });
    const burstId = (await prepare(first)).startedBursts[0]?.burstId ?? '';
    await prepare(last);
    const claim = (now: number) =>
      claimBurst(redis, keys, {
        conversationId: 'c1',
        rule: 'answer-once',
        burstId,
        settings,
        now,
        runSeconds: 60,
      });
    expect(await claim(t0 + 1_000)).toEqual({ kind: 'wait', dueAt: t0 + 1_400 });
    const taken = await claim(t0 + 1_400);
    expect(taken).toMatchObject({ kind: 'go', burst: { count: 2, texts: ['a', 'b'] } });
    // Taken again (the job ran again after a crash): the same burst, from its run state.
    expect(await claim(t0 + 1_500)).toMatchObject({ kind: 'go', burst: { count: 2 } });
    expect(await registration()).toEqual({ state: 'closed' });
    // The last message runs again (cut off before it left its order): it was answered with the burst.
    expect((await prepare(last)).startedBursts).toEqual([]);
    expect(await registration()).toEqual({ state: 'closed' });
    // Any other message begins the next burst.
    const next = makeEvent({
      conversationId: 'c1',
      text: 'c',
      receivedAt: new Date(t0 + 2_000).toISOString(),
    });
    expect((await prepare(next)).startedBursts).toHaveLength(1);
    expect(await registration()).toMatchObject({ state: 'pending', burst: { count: 1, texts: ['c'] } });
  });

  it('keeps texts as the pure grouping does: 1,000 characters each, 4,000 bytes in all (multi-byte text too)', async () => {
    prefix = uniqueName('t-burst-cap');
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      // 'é' is two bytes in UTF-8: 600 of them are 1,200 bytes.
      await prepare(
        makeEvent({
          conversationId: 'c1',
          text: 'é'.repeat(600),
          receivedAt: new Date(t0 + i).toISOString(),
        }),
      );
    }
    const open = await registration();
    if (open?.state !== 'pending') throw new Error('no pending burst');
    expect(open.burst.count).toBe(5);
    expect(open.burst.texts).toHaveLength(3);
    expect(open.burst.droppedTexts).toBe(2);
  });
});

describe('a debounced rule end to end in one process (real Redis, real BullMQ)', () => {
  let redis: Redis;
  let prefix: string;
  let worker: BridgeWorker | undefined;
  let queue: Queue | undefined;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    await worker?.close(0);
    await queue?.close();
    await deleteKeys(redis, prefix);
    worker = undefined;
    queue = undefined;
  });

  async function start(config: string) {
    prefix = uniqueName('t-bursts');
    const replies: string[] = [];
    const notes: string[] = [];
    const platform: PlatformPort = {
      sendMessage: async (input) => {
        replies.push(`${input.conversationId}: ${input.text}`);
        return { messageId: `sent-${replies.length}` };
      },
      addNote: async (conversationId, note) => {
        notes.push(`${conversationId}: ${note}`);
        return {};
      },
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const { rules } = parseConfigText(config, { fileName: 'bursts.yaml', env: {} });
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      platform,
      classifyPlatformError: () => undefined,
      forwarder: { forward: async () => ({ status: 200 }) },
      rules: () => rulesPort(rules),
      settings: parseWorkerSettings({ concurrency: 4 }),
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
    return { replies, notes };
  }

  const ingest = (events: ConversationEvent[]) =>
    ingestBatch(
      {
        redis,
        queue: queue as Queue,
        keys: bridgeKeys(prefix),
        dedupeWindowSeconds: 60,
        jobOptions: { attempts: 3 },
      },
      events,
    );
  const say = (conversationId: string, text: string) =>
    makeEvent({ conversationId, text, receivedAt: new Date().toISOString() });
  const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('three messages within a second: three per-message notes, one reply naming the burst', async () => {
    const { replies, notes } = await start(CONFIG('1s'));
    await ingest([say('c1', 'halo')]);
    await ingest([say('c1', 'mau tanya')]);
    await ingest([say('c1', 'pesanan saya belum sampai')]);
    await waitFor(() => replies.length === 1, { timeoutMs: 10_000, what: 'the burst reply' });
    expect(replies).toEqual(['c1: 3 pesan: halo\nmau tanya\npesanan saya belum sampai']);
    expect(notes).toEqual(['c1: seen halo', 'c1: seen mau tanya', 'c1: seen pesanan saya belum sampai']);
    // Past another debounce: nothing more, and the burst's run state is gone.
    await quiet(1_500);
    expect(replies).toHaveLength(1);
    expect(await redis.keys(`${prefix}:bridge:run:*`)).toEqual([]);
  });

  it('an agent reply during the burst cancels it; the next message begins a new one', async () => {
    const { replies } = await start(CONFIG('1s'));
    await ingest([say('c2', 'halo')]);
    await ingest([
      makeEvent({ conversationId: 'c2', kind: 'agent_reply', name: 'agent.message_out', text: 'ya?' }),
    ]);
    await quiet(2_000);
    expect(replies).toEqual([]);
    await ingest([say('c2', 'masih ada?')]);
    await waitFor(() => replies.length === 1, { timeoutMs: 10_000, what: 'the reply to the second burst' });
    expect(replies).toEqual(['c2: 1 pesan: masih ada?']);
  });

  it('max_wait answers a customer who never goes quiet', async () => {
    const { replies } = await start(CONFIG('800ms', '    max_wait: 1500ms\n'));
    for (let i = 0; i < 8; i++) {
      await ingest([say('c3', `m${i}`)]);
      await quiet(300);
    }
    // The first burst ended 1.5 s after it began though messages kept coming every 300 ms (a
    // stall of the test process longer than the debounce could split the rest once more).
    const counts = () => replies.map((r) => Number(/: (\d+) pesan/.exec(r)?.[1]));
    await waitFor(() => counts().reduce((a, b) => a + b, 0) === 8, {
      timeoutMs: 10_000,
      what: 'every message answered in some burst',
    });
    expect(replies.length).toBeGreaterThanOrEqual(2);
    expect(counts()[0]).toBeGreaterThanOrEqual(3);
    expect(counts()[0]).toBeLessThan(8);
  });
});
