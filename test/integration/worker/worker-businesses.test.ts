import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseWorkerSettings } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { businessNaming } from '../../../src/events/business-naming.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { ingestItems } from '../../../src/queue/ingest-event.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import type { WorkerBusiness } from '../../../src/worker/businesses/worker-business.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import { countDeadLetters } from '../../../src/worker/failures/dead-letters.js';
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

/** A fake platform of one business: records its notes, can refuse credentials or answer slowly. */
class FakePlatform {
  readonly notes: string[] = [];
  refuseCredentials = false;
  rateLimited = false;
  delayMs = 0;
  running = 0;
  mostRunning = 0;
  readonly port: PlatformPort = {
    addNote: async (conversationId, note) => {
      this.running += 1;
      this.mostRunning = Math.max(this.mostRunning, this.running);
      try {
        if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
        if (this.refuseCredentials) throw new Error('AUTH');
        if (this.rateLimited) throw new Error('RATE');
        this.notes.push(`${conversationId}: ${note}`);
        return {};
      } finally {
        this.running -= 1;
      }
    },
    sendMessage: async () => ({}),
    markNeedHuman: async () => undefined,
    async *history() {},
  };
}

/**
 * A worker of several businesses (issue 26) on shared queues: each job runs with its business's
 * platform and keys; a business whose platform refuses its credentials pauses alone; a business
 * whose platform hangs takes at most worker.business_concurrency slots; a job of a business the
 * worker does not serve waits until it does. Real Redis, real BullMQ.
 */
describe('a worker of several businesses (real Redis, real BullMQ)', () => {
  let redis: Redis;
  let prefix: string;
  let worker: BridgeWorker | undefined;
  let queue: Queue | undefined;
  const { rules } = parseConfigText(CONFIG, { fileName: 'businesses.yaml', env: {} });

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

  const businessOf = (id: string, platform: FakePlatform): WorkerBusiness => ({
    id,
    naming: businessNaming(id, false),
    platform: platform.port,
    classifyPlatformError: (error) => {
      if (!(error instanceof Error)) return undefined;
      if (error.message === 'AUTH')
        return { kind: 'auth', code: 'AUTH', message: 'the platform refuses the credentials' };
      if (error.message === 'RATE') {
        return {
          kind: 'rate-limited',
          code: 'RATE_LIMITED',
          message: 'too many requests',
          retryAfterMs: 300,
        };
      }
      return undefined;
    },
    forwarder: { forward: async () => ({ status: 200 }) },
    rules: () => rulesPort(rules),
  });

  async function start(platforms: Record<string, FakePlatform>, settings = {}) {
    prefix = uniqueName('t-biz-worker');
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      businesses: Object.entries(platforms).map(([id, platform]) => businessOf(id, platform)),
      settings: parseWorkerSettings({
        concurrency: 8,
        business_concurrency: 2,
        auth_failure_pause: '400ms',
        backoff: { base: '20ms', max: '40ms' },
        ...settings,
      }),
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
  }

  const layout = () => createKeyLayout({ prefix, shards: 1, tagged: false });
  /**
   * Stores one batch as the receiver does: each event with its business (its conversation keys, its
   * id in front of the event key); one batch may hold several businesses' events.
   */
  const ingestMixed = (items: { business: string; event: ConversationEvent }[]) =>
    ingestItems(
      {
        redis,
        queue: queue as Queue,
        keys: layout().global,
        keysOf: (naming) => layout().forNaming(naming).global,
        dedupeWindowSeconds: 60,
        jobOptions: { attempts: 8 },
      },
      items.map(({ business, event }) => ({
        naming: businessNaming(business, false),
        event: { ...event, key: `${business}:${event.key}` },
      })),
    );
  const ingest = (business: string, events: ConversationEvent[]) =>
    ingestMixed(events.map((event) => ({ business, event })));

  it("runs each business's events with its own platform; the same ids are two businesses' events", async () => {
    const a = new FakePlatform();
    const b = new FakePlatform();
    await start({ 'toko-a': a, 'toko-b': b });
    const event = makeEvent({ conversationId: 'conv-1' });
    await ingest('toko-a', [event]);
    await ingest('toko-b', [event]);
    await waitFor(() => a.notes.length === 1 && b.notes.length === 1, {
      timeoutMs: 10_000,
      what: 'both notes',
    });
    expect(a.notes).toEqual([`conv-1: seen ${event.messageId}`]);
    expect(b.notes).toEqual([`conv-1: seen ${event.messageId}`]);
  });

  it('runs the events of one batch with their own businesses; a paused business holds only its own', async () => {
    const a = new FakePlatform();
    const b = new FakePlatform();
    a.refuseCredentials = true;
    await start({ 'toko-a': a, 'toko-b': b });
    const event = makeEvent({ conversationId: 'conv-1' });
    await ingestMixed([
      { business: 'toko-a', event },
      { business: 'toko-b', event },
      { business: 'toko-b', event: makeEvent({ conversationId: 'conv-2' }) },
    ]);
    await waitFor(() => b.notes.length === 2, { timeoutMs: 10_000, what: "toko-b's notes" });
    expect(a.notes).toHaveLength(0);
    a.refuseCredentials = false;
    await waitFor(() => a.notes.length === 1, { timeoutMs: 10_000, what: "toko-a's note after the fix" });
    expect(b.notes).toHaveLength(2);
    expect(a.notes).toEqual([`conv-1: seen ${event.messageId}`]);
  });

  it.each([
    ['refuses its credentials (401)', 'auth', (p: FakePlatform, on: boolean) => (p.refuseCredentials = on)],
    ['answers 429', 'rate-limited', (p: FakePlatform, on: boolean) => (p.rateLimited = on)],
  ] as const)(
    "pauses only the business whose platform %s; the others' events go on",
    async (_label, reason, set) => {
      const a = new FakePlatform();
      const b = new FakePlatform();
      set(a, true);
      await start({ 'toko-a': a, 'toko-b': b });
      await ingest(
        'toko-a',
        Array.from({ length: 5 }, (_, i) => makeEvent({ conversationId: `a-${i}` })),
      );
      await waitFor(() => worker?.businessStatus().find((s) => s.id === 'toko-a')?.pauseReason === reason, {
        timeoutMs: 10_000,
        what: "toko-a's pause",
      });
      const started = Date.now();
      await ingest(
        'toko-b',
        Array.from({ length: 5 }, (_, i) => makeEvent({ conversationId: `b-${i}` })),
      );
      await waitFor(() => b.notes.length === 5, { timeoutMs: 10_000, what: "toko-b's notes" });
      // toko-b's events did not wait for toko-a's pause (renewed while its platform refuses).
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(a.notes).toHaveLength(0);
      // Fixed: toko-a's events are done after its pause, no attempt used, nothing dead-lettered.
      set(a, false);
      await waitFor(() => a.notes.length === 5, { timeoutMs: 10_000, what: "toko-a's notes after the fix" });
      expect(await countDeadLetters(redis, layout().forNaming(businessNaming('toko-a', false)).global)).toBe(
        0,
      );
      expect(worker?.businessStatus().find((s) => s.id === 'toko-b')?.pauseReason).toBeNull();
    },
  );

  it('a lone busy business may use most slots; a hanging one never holds up the others; each event once', async () => {
    const slow = new FakePlatform();
    const quick = new FakePlatform();
    slow.delayMs = 2_000;
    await start({ slow, quick });
    for (let i = 0; i < 20; i++) await ingest('slow', [makeEvent({ conversationId: `s-${i}` })]);
    // Alone, it takes more than its share (2 of 8), up to its ceiling: three quarters of the slots.
    await waitFor(() => slow.running === 6, { timeoutMs: 5_000, what: 'the slow business at its ceiling' });
    const started = Date.now();
    await ingest(
      'quick',
      Array.from({ length: 6 }, (_, i) => makeEvent({ conversationId: `q-${i}` })),
    );
    // The quick business's events run in the slots left to others, not after the slow calls.
    await waitFor(() => quick.notes.length === 6, { timeoutMs: 10_000, what: "the quick business's notes" });
    expect(Date.now() - started).toBeLessThan(1_500);
    // Every slow event is done once in the end (parked jobs are woken), never more than 6 at once.
    await waitFor(() => slow.notes.length === 20, { timeoutMs: 30_000, what: "the slow business's notes" });
    expect(slow.mostRunning).toBe(6);
    expect(new Set(slow.notes).size).toBe(20);
  });

  it('keeps a job of a business it does not serve, and runs it once the business is added', async () => {
    const a = new FakePlatform();
    const later = new FakePlatform();
    await start({ 'toko-a': a });
    const event = makeEvent({ conversationId: 'conv-9' });
    await ingest('toko-later', [event]);
    await waitFor(async () => (await queue?.getDelayedCount()) === 1, {
      timeoutMs: 5_000,
      what: 'the job to wait in the delayed set',
    });
    expect(later.notes).toHaveLength(0);
    worker?.setBusinesses([businessOf('toko-a', a), businessOf('toko-later', later)]);
    await waitFor(() => later.notes.length === 1, { timeoutMs: 10_000, what: "toko-later's note" });
    expect(a.notes).toHaveLength(0);
  });

  it("finishes a removed business's queued events with its last context", async () => {
    const a = new FakePlatform();
    const b = new FakePlatform();
    a.delayMs = 200;
    await start({ 'toko-a': a, 'toko-b': b });
    await ingest(
      'toko-a',
      Array.from({ length: 4 }, (_, i) => makeEvent({ conversationId: `a-${i}` })),
    );
    worker?.setBusinesses([businessOf('toko-b', b)]);
    await waitFor(() => a.notes.length === 4, { timeoutMs: 10_000, what: "the removed business's notes" });
  });
});
