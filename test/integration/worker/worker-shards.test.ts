import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseWorkerSettings } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { createKeyLayout, shardIndexOf } from '../../../src/queue/key-layout.js';
import { createEventProducer, DEFAULT_EVENT_JOB_OPTIONS } from '../../../src/receive/event-producer.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const CONFIG = `
platform: { base_url: "https://platform.invalid", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: seen
    on: message_in
    then: [ { note: "seen {{event.messageId}}" } ]
`;

/** Conversation ids that land in shard `index` of `count`. */
function conversationsOf(index: number, count: number, n: number): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < n; i++)
    if (shardIndexOf(`conv-${i}`, count) === index) found.push(`conv-${i}`);
  return found;
}

// Issue 14, point 3: "each worker process consuming every shard or a configured subset".
describe('queue shards and worker.shards (real Redis, real BullMQ)', () => {
  const redis = connectTestRedis();
  const prefix = uniqueName('t-shards');
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await deleteKeys(redis, `{${prefix}`);
  });

  it('a worker given shards [1] runs only shard 1; one given [0] then runs the rest, each conversation in order', async () => {
    const layout = createKeyLayout({ prefix, shards: 2, tagged: true });
    const producer = createEventProducer({
      redisUrl: testRedisUrl(),
      prefix,
      layout,
      dedupeWindowSeconds: 600,
      jobOptions: DEFAULT_EVENT_JOB_OPTIONS,
      commandTimeoutMs: 2_000,
      logger: pino({ level: 'silent' }),
    });
    cleanups.push(() => producer.close());
    await producer.connected(5_000);
    const [a, b] = [conversationsOf(0, 2, 3), conversationsOf(1, 2, 3)];
    const events = [...(a ?? []), ...(b ?? [])].flatMap((conversationId) =>
      [1, 2, 3].map(() => makeEvent({ conversationId })),
    );
    for (const event of events) await producer.ingest(event);

    const notes: string[] = [];
    const platform: PlatformPort = {
      async addNote(conversationId, note) {
        notes.push(`${conversationId} ${note}`);
        return {};
      },
      sendMessage: async () => ({}),
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const { rules } = parseConfigText(CONFIG, { fileName: 'shards.yaml', env: {} });
    const startWorker = async (shards: number[]): Promise<BridgeWorker> => {
      const worker = createBridgeWorker({
        redisUrl: testRedisUrl(),
        prefix,
        layout,
        settings: parseWorkerSettings({ shards }),
        platform,
        classifyPlatformError: () => undefined,
        forwarder: { forward: async () => ({ status: 200 }) },
        rules: () => rulesPort(rules),
      });
      cleanups.push(() => worker.close(0));
      await worker.start();
      return worker;
    };
    await startWorker([1]);
    await waitFor(() => notes.length === 9, { timeoutMs: 15_000, what: "shard 1's nine notes" });
    expect(new Set(notes.map((n) => n.split(' ')[0]))).toEqual(new Set(b));
    // Shard 0's events wait in their own queue, untouched.
    const shard0 = layout.all[0];
    expect(await redis.zcard(shard0?.keys.order(a?.[0] ?? '') ?? '')).toBe(3);

    await startWorker([0]);
    await waitFor(() => notes.length === 18, { timeoutMs: 15_000, what: 'all eighteen notes' });
    for (const conversationId of [...(a ?? []), ...(b ?? [])]) {
      const expected = events
        .filter((e) => e.conversationId === conversationId)
        .map((e) => `${conversationId} seen ${e.messageId}`);
      expect(notes.filter((n) => n.startsWith(`${conversationId} `))).toEqual(expected);
    }
  });

  it('refuses a worker that consumes no shard', () => {
    const layout = createKeyLayout({ prefix, shards: 2, tagged: true });
    const { rules } = parseConfigText(CONFIG, { fileName: 'shards.yaml', env: {} });
    expect(() =>
      createBridgeWorker({
        redisUrl: testRedisUrl(),
        prefix,
        layout,
        settings: parseWorkerSettings({ shards: [5] }),
        platform: {} as PlatformPort,
        classifyPlatformError: () => undefined,
        forwarder: { forward: async () => ({ status: 200 }) },
        rules: () => rulesPort(rules),
      }),
    ).toThrow(/consumes no shard: check worker.shards/);
  });
});
