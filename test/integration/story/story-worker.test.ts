import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseStorySettings, parseWorkerSettings } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { forgetConversation } from '../../../src/privacy/forget-conversation.js';
import { ingestBatch } from '../../../src/queue/ingest-event.js';
import { createKeyLayout, type KeyLayout } from '../../../src/queue/key-layout.js';
import { createStoryReader, type StoryReader } from '../../../src/story/story-reader.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

/**
 * The conversation's story with a real worker, real BullMQ and real Redis: events run through the
 * worker, then the story is read back as the operator API reads it: which rule escalated and why,
 * found by the phone number written another way, by name, rule, outcome; counted in the hour's
 * stats; gone (story and search) once the conversation is forgotten.
 */
const CONFIG = `
platform: { base_url: "https://platform.invalid", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund ] } }
    then: [ { note: "escalated" }, { need_human: true }, { tag: complaint, for: 1d } ]
    stop: true
  - name: catalog
    on: message_in
    if: { text: { any_keywords: [ katalog, refund ] } }
    then: [ { note: "catalog" } ]
  - name: broken
    on: message_in
    if: { text: { any_keywords: [ rusak ] } }
    then: [ { note: "fails" } ]
  - name: remind
    on: message_in
    if: { text: { any_keywords: [ tunggu, nanti ] } }
    then:
      - after: 300ms
        unless: agent_reply
        then: [ { note: "reminder" } ]
`;

describe("the conversation's story (real worker, real Redis)", () => {
  let redis: Redis;
  let prefix: string;
  let worker: BridgeWorker | undefined;
  let queue: Queue | undefined;
  let layout: KeyLayout;
  let reader: StoryReader;
  const notes: string[] = [];
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
    notes.length = 0;
  });

  async function start(story = parseStorySettings({ enabled: true })) {
    prefix = uniqueName('t-story');
    layout = createKeyLayout({ prefix, shards: 1, tagged: false });
    const platform: PlatformPort = {
      async addNote(conversationId, note) {
        if (note === 'fails') throw new Error('the platform refused the note');
        notes.push(`${conversationId}: ${note}`);
        return {};
      },
      sendMessage: async () => ({}),
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const { rules, config } = parseConfigText(CONFIG, { fileName: 'story.yaml', env: {} });
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      layout,
      platform,
      classifyPlatformError: () => undefined,
      forwarder: { forward: async () => ({ status: 200 }) },
      rules: () => rulesPort(rules),
      settings: parseWorkerSettings({ attempts: 2, backoff: { base: '20ms', max: '40ms' }, concurrency: 4 }),
      retention: config.retention,
      story,
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
    reader = createStoryReader({
      redis,
      layoutOf: (business) => (business === 'default' ? layout : undefined),
      retentionMs: config.retention.storiesMs,
    });
  }

  const ingest = (events: ConversationEvent[]) =>
    ingestBatch(
      {
        redis,
        queue: queue as Queue,
        keys: layout.global,
        dedupeWindowSeconds: 60,
        jobOptions: { attempts: 2 },
      },
      events,
    );
  const finished = (conversationId: string) =>
    waitFor(async () => (await redis.zcard(layout.global.order(conversationId))) === 0, {
      timeoutMs: 15_000,
      what: `the events of ${conversationId} to finish`,
    });

  it('says which rule escalated and why, finds it by the phone written another way, and forgets it', async () => {
    await start();
    await ingest([
      makeEvent({
        conversationId: 'C1',
        senderName: 'Siti Aminah',
        text: 'halo, nomor saya +62 812-3456-7890',
      }),
      makeEvent({ conversationId: 'C1', senderName: 'Siti Aminah', text: 'saya mau refund' }),
      makeEvent({ conversationId: 'C2', senderName: 'Budi', text: 'minta katalog, budi@example.com' }),
    ]);
    await waitFor(() => notes.length === 2, { timeoutMs: 15_000, what: 'the two notes' });
    await Promise.all([finished('C1'), finished('C2')]);

    const story = await reader.story('default', 'C1');
    expect(story).not.toBeNull();
    const verdicts = story?.entries.filter((e) => e.kind === 'verdict').map((e) => e.words);
    expect(verdicts).toContain("MATCH escalate: text has keyword 'refund'");
    expect(verdicts).toContain("no catalog: skipped: an earlier rule 'escalate' has stop: true");
    const actions = story?.entries.filter((e) => e.kind === 'action');
    expect(actions?.map((a) => [a.type, a.outcome])).toEqual([
      ['note', 'done'],
      ['need_human', 'done'],
      ['tag', 'done'],
    ]);
    expect(story?.outcomes).toEqual(['escalated']);
    expect(story?.tags.map((t) => t.name)).toEqual(['complaint']);
    expect(story?.customer).toEqual({ name: 'Siti Aminah', phones: ['+62 812-3456-7890'], emails: [] });

    // Found by the phone written another way, by a word of the name, by rule, by outcome, by tag.
    const ids = async (query: Parameters<StoryReader['search']>[1]) =>
      (await reader.search('default', query, { limit: 10 })).conversations.map((c) => c.conversation);
    expect(await ids({ q: '0812 3456 7890' })).toEqual(['C1']);
    expect(await ids({ q: 'BUDI@example.com' })).toEqual(['C2']);
    expect(await ids({ q: 'aminah' })).toEqual(['C1']);
    expect(await ids({ q: 'C2' })).toEqual(['C2']);
    expect(await ids({ rule: 'escalate' })).toEqual(['C1']);
    expect(await ids({ outcome: 'escalated' })).toEqual(['C1']);
    expect(await ids({ tag: 'complaint' })).toEqual(['C1']);
    expect(await ids({ rule: 'catalog' })).toEqual(['C2']);
    expect((await ids({})).sort()).toEqual(['C1', 'C2']);
    // Another business sees nothing.
    expect(await reader.story('other', 'C1')).toBeNull();

    const stats = await reader.stats('default', Date.now() - 3_600_000);
    expect(stats.events).toBe(3);
    expect(stats.escalations).toBe(1);
    expect(stats.actions).toEqual({ note: 2, need_human: 1, tag: 1 });

    await forgetConversation(redis, layout, 'C1');
    expect(await reader.story('default', 'C1')).toBeNull();
    expect(await ids({ q: '0812 3456 7890' })).toEqual([]);
    expect(await ids({ rule: 'escalate' })).toEqual([]);
    expect((await ids({})).sort()).toEqual(['C2']);
    // Nothing of C1 stays under the story's keys (the term sets of C1 alone are gone whole).
    for (const key of await redis.keys(`${prefix}:bridge:story:*`)) {
      const type = await redis.type(key);
      if (type === 'zset') expect(await redis.zscore(key, 'C1')).toBeNull();
    }
  });

  it('pages through search answers with a cursor, newest first', async () => {
    await start();
    for (let i = 0; i < 5; i++) {
      await ingest([makeEvent({ conversationId: `P${i}`, text: 'katalog' })]);
      await finished(`P${i}`);
    }
    const first = await reader.search('default', { rule: 'catalog' }, { limit: 2 });
    expect(first.conversations.map((c) => c.conversation)).toEqual(['P4', 'P3']);
    const second = await reader.search('default', { rule: 'catalog' }, { limit: 2, cursor: first.cursor });
    expect(second.conversations.map((c) => c.conversation)).toEqual(['P2', 'P1']);
    const third = await reader.search('default', { rule: 'catalog' }, { limit: 2, cursor: second.cursor });
    expect(third.conversations.map((c) => c.conversation)).toEqual(['P0']);
    expect(third.cursor).toBeNull();
  });

  it('a dead letter, a timer that fired and one an agent reply cancelled are in the story', async () => {
    await start();
    await ingest([
      makeEvent({ conversationId: 'D1', text: 'barang rusak' }),
      makeEvent({ conversationId: 'T1', text: 'tunggu ya' }),
      makeEvent({ conversationId: 'T2', text: 'nanti ya' }),
    ]);
    await finished('T2');
    await ingest([
      makeEvent({ conversationId: 'T2', kind: 'agent_reply', name: 'agent.message_out', text: 'ok' }),
    ]);
    await waitFor(() => notes.includes('T1: reminder'), { timeoutMs: 15_000, what: "T1's reminder" });
    await waitFor(
      async () => (await reader.story('default', 'D1'))?.outcomes.includes('dead_letter') === true,
      {
        timeoutMs: 15_000,
        what: "D1's dead letter in its story",
      },
    );
    const dead = await reader.story('default', 'D1');
    expect(dead?.entries.find((e) => e.kind === 'action')).toMatchObject({
      outcome: 'dead_lettered',
      attempts: 2,
      error: 'the platform refused the note',
    });
    const ids = async (query: Parameters<StoryReader['search']>[1]) =>
      (await reader.search('default', query, { limit: 10 })).conversations.map((c) => c.conversation);
    expect(await ids({ outcome: 'dead_letter' })).toEqual(['D1']);

    await waitFor(
      async () =>
        (await reader.story('default', 'T1'))?.entries.some(
          (e) => e.kind === 'timer' && e.state === 'fired',
        ) === true,
      {
        timeoutMs: 15_000,
        what: "T1's timer fired in its story",
      },
    );
    const fired = (await reader.story('default', 'T1'))?.entries.filter((e) => e.kind === 'timer');
    expect(fired?.map((e) => (e.kind === 'timer' ? e.state : ''))).toEqual(['pending', 'fired']);
    // One timer: the pending entry and the fired one name the same id.
    expect(new Set(fired?.map((e) => (e.kind === 'timer' ? e.timerId : ''))).size).toBe(1);
    const cancelled = (await reader.story('default', 'T2'))?.entries.filter((e) => e.kind === 'timer');
    expect(cancelled?.map((e) => (e.kind === 'timer' ? [e.state, e.by] : []))).toEqual([
      ['pending', 'cancelled by agent_reply'],
      ['cancelled', 'agent_reply'],
    ]);
    const stats = await reader.stats('default', Date.now() - 3_600_000);
    expect(stats.deadLetters).toBe(1);
  });

  it('writes nothing when story.enabled is off', async () => {
    await start(parseStorySettings({ enabled: false }));
    await ingest([makeEvent({ conversationId: 'Z1', text: 'refund' })]);
    await waitFor(() => notes.length === 1, { timeoutMs: 15_000, what: 'the note' });
    await finished('Z1');
    expect(await redis.keys(`${prefix}:bridge:story*`)).toEqual([]);
    expect(await reader.story('default', 'Z1')).toBeNull();
  });
});
