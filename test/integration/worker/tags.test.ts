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
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

/**
 * Tags in the worker (issue 28, point 2), with real Redis and BullMQ: kept in the conversation
 * hash (`G:<tag>`), read by the batch's one prepare call, written by the leave call; seen by the
 * conversation's later events and by no other conversation; exactly once across a failed run and
 * its retry (the plan fixes the expiry); expired tags ignored, then deleted; forwards carry them;
 * a timer's tag and untag written by the timer's own write.
 */
const CONFIG = `
platform: { base_url: "https://platform.invalid", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { secrets: [ w ] }
destinations: { crm: { url: "https://crm.invalid/hooks" } }
rules:
  - name: mark-vip
    on: message_in
    if: { text: { any_keywords: [ vip ] } }
    then: [ { tag: vip, for: 24h }, { note: "marked {{tags}}" } ]
  - name: fast-lane
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { note: "fast lane for {{tags}}" }, { forward: crm } ]
  - name: forget-vip
    on: message_in
    if: { text: { any_keywords: [ biasa ] } }
    then: [ { untag: vip }, { note: "unmarked" } ]
  - name: waiting
    on: message_in
    if: { text: { any_keywords: [ tunggu ] } }
    then:
      - after: 300ms
        then: [ { tag: waited }, { untag: vip }, { forward: crm } ]
`;

const DAY = 86_400_000;

describe('tags in the worker (real Redis, real BullMQ)', () => {
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

  /**
   * A worker on a clock the test moves (`clock.offsetMs`), whose platform fails the note calls
   * listed in `failNotes` (by their text, once each), moving the clock an hour on when it does.
   */
  async function start(failNotes: string[] = []) {
    prefix = uniqueName('t-tags');
    const clock = { offsetMs: 0 };
    const notes: string[] = [];
    const forwards: { conversationId: string; tags: string[] }[] = [];
    const toFail = new Set(failNotes);
    const platform: PlatformPort = {
      async addNote(conversationId, note) {
        if (toFail.delete(note)) {
          clock.offsetMs += 3_600_000;
          throw new Error(`the note "${note}" failed once`);
        }
        notes.push(`${conversationId}: ${note}`);
        return {};
      },
      sendMessage: async () => ({}),
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const { rules } = parseConfigText(CONFIG, { fileName: 'tags.yaml', env: {} });
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      platform,
      classifyPlatformError: () => undefined,
      forwarder: {
        async forward(_destination, body) {
          const b = body as { event: ConversationEvent; tags: string[] };
          forwards.push({ conversationId: b.event.conversationId ?? '', tags: b.tags });
          return { status: 200 };
        },
      },
      rules: () => rulesPort(rules),
      settings: parseWorkerSettings({ attempts: 3, backoff: { base: '20ms', max: '40ms' }, concurrency: 4 }),
      now: () => new Date(Date.now() + clock.offsetMs),
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
    return { clock, notes, forwards };
  }

  const keys = () => bridgeKeys(prefix);
  const ingest = (events: ConversationEvent[]) =>
    ingestBatch(
      { redis, queue: queue as Queue, keys: keys(), dedupeWindowSeconds: 60, jobOptions: { attempts: 3 } },
      events,
    );
  const tagFields = async (conversationId: string) =>
    Object.fromEntries(
      Object.entries(await redis.hgetall(keys().conversation(conversationId))).filter(([f]) =>
        f.startsWith('G:'),
      ),
    );
  const say = (conversationId: string, text: string) => makeEvent({ conversationId, text });
  const finished = (conversationId: string) =>
    waitFor(async () => (await redis.zcard(keys().order(conversationId))) === 0, {
      timeoutMs: 15_000,
      what: `the events of ${conversationId} to finish`,
    });

  it("a tag set by one event is seen by the conversation's later events, and by no other conversation", async () => {
    const { notes, forwards } = await start();
    const before = Date.now();
    await ingest([say('A', 'halo'), say('A', 'saya vip'), say('B', 'halo'), say('A', 'pesanan saya?')]);
    await waitFor(() => notes.length === 3, { timeoutMs: 15_000, what: 'three notes' });
    await Promise.all([finished('A'), finished('B')]);
    expect(notes).toEqual(['A: marked vip', 'A: fast lane for vip', 'A: fast lane for vip']);
    // The event that set the tag sees it too (rules after mark-vip); B never does.
    expect(forwards).toEqual([
      { conversationId: 'A', tags: ['vip'] },
      { conversationId: 'A', tags: ['vip'] },
    ]);
    const fields = await tagFields('A');
    expect(Object.keys(fields)).toEqual(['G:vip']);
    const until = Number(fields['G:vip']);
    expect(until).toBeGreaterThanOrEqual(before + DAY);
    expect(until).toBeLessThanOrEqual(Date.now() + DAY);
    expect(await tagFields('B')).toEqual({});
  });

  it('exactly once across a failed run and its retry: the expiry the plan fixed, the untag kept', async () => {
    const { clock, notes } = await start(['marked vip', 'unmarked']);
    const planned = Date.now();
    await ingest([say('C', 'vip')]);
    await waitFor(() => notes.length === 2, { timeoutMs: 15_000, what: 'the notes after the retry' });
    await finished('C');
    expect(notes).toEqual(['C: marked vip', 'C: fast lane for vip']);
    // The retry ran an hour later by the worker's clock: the tag still expires a day after the
    // plan, not a day after the retry.
    expect(clock.offsetMs).toBe(3_600_000);
    const until = Number((await tagFields('C'))['G:vip']);
    expect(until).toBeGreaterThanOrEqual(planned + DAY);
    expect(until).toBeLessThan(planned + DAY + 600_000);

    // The untag's run fails after it (at the note); its retry must not leave the tag behind.
    await ingest([say('C', 'biasa saja')]);
    await waitFor(() => notes.length === 4, { timeoutMs: 15_000, what: 'the unmarked note after its retry' });
    await finished('C');
    expect(clock.offsetMs).toBe(7_200_000);
    expect(notes.slice(2)).toEqual(['C: fast lane for vip', 'C: unmarked']);
    expect(await tagFields('C')).toEqual({});
  });

  it('an expired tag is ignored by the next event, and deleted by its write', async () => {
    const { clock, notes } = await start();
    await ingest([say('D', 'vip')]);
    await waitFor(() => notes.length === 2, { timeoutMs: 15_000, what: 'the first two notes' });
    await finished('D');
    expect(Object.keys(await tagFields('D'))).toEqual(['G:vip']);

    clock.offsetMs = DAY - 60_000; // a minute before it expires: still in force
    await ingest([say('D', 'masih?')]);
    await waitFor(() => notes.length === 3, { timeoutMs: 15_000, what: 'the fast-lane note' });
    await finished('D');

    clock.offsetMs = DAY + 60_000; // a minute after
    const late = say('D', 'halo lagi');
    await ingest([late]);
    await finished('D');
    expect(notes).toEqual(['D: marked vip', 'D: fast lane for vip', 'D: fast lane for vip']);
    expect(await tagFields('D')).toEqual({});
  });

  it("a timer's tag and untag are written when it fires; its forward carries the tags then", async () => {
    const { notes, forwards } = await start();
    await ingest([say('E', 'vip'), say('E', 'tunggu ya')]);
    await waitFor(() => forwards.length === 3, { timeoutMs: 15_000, what: "the timer's forward" });
    await finished('E');
    expect(notes).toEqual(['E: marked vip', 'E: fast lane for vip', 'E: fast lane for vip']);
    expect(forwards.map((f) => f.tags)).toEqual([['vip'], ['vip'], ['waited']]);
    await waitFor(async () => JSON.stringify(await tagFields('E')) === JSON.stringify({ 'G:waited': '0' }), {
      timeoutMs: 15_000,
      what: "the timer's tag fields",
    });
  });
});
