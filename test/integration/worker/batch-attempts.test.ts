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
import { countDeadLetters, listDeadLetters } from '../../../src/worker/failures/dead-letters.js';
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

/**
 * Each event of a batch job has its own attempts (worker.attempts): one event's failed runs must
 * not use up the attempts of its neighbours (fault scenario 4 found a dead letter when they were
 * the job's). A platform whose note call fails by a script per conversation; real Redis and BullMQ.
 */
describe('a batch job: attempts per event (real Redis, real BullMQ)', () => {
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

  /** Starts a worker whose platform fails the note calls of a conversation as `failures` says. */
  async function start(failures: Record<string, boolean[]>) {
    prefix = uniqueName('t-attempts');
    const notes: string[] = [];
    const calls: Record<string, number> = {};
    const platform: PlatformPort = {
      async addNote(conversationId, note) {
        const n = calls[conversationId] ?? 0;
        calls[conversationId] = n + 1;
        if (failures[conversationId]?.[n]) throw new Error(`note call ${n + 1} of ${conversationId} failed`);
        notes.push(`${conversationId}: ${note}`);
        return {};
      },
      sendMessage: async () => ({}),
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const { rules } = parseConfigText(CONFIG, { fileName: 'attempts.yaml', env: {} });
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      platform,
      classifyPlatformError: () => undefined,
      forwarder: { forward: async () => ({ status: 200 }) },
      rules: () => rulesPort(rules),
      settings: parseWorkerSettings({ attempts: 3, backoff: { base: '20ms', max: '40ms' }, concurrency: 4 }),
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
    return { notes, calls };
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

  it("an event's attempts are its own: it is not dead-lettered on the job's third run after two failures", async () => {
    // X fails its first two runs. Y1 fails once; Y2 (after Y1 in the same conversation) first runs
    // in the job's second run and fails there and in the third. Counted per job, the third run
    // was the last and Y2 was dead-lettered after two failures; counted per event, Y2 gets its
    // own third run and succeeds.
    const { notes, calls } = await start({ X: [true, true, false], Y: [true, false, true, true, false] });
    const x = makeEvent({ conversationId: 'X' });
    const y1 = makeEvent({ conversationId: 'Y' });
    const y2 = makeEvent({ conversationId: 'Y' });
    await ingest([x, y1, y2]);
    await waitFor(() => notes.length === 3, { timeoutMs: 15_000, what: 'the three notes' });
    expect(notes.filter((n) => n.startsWith('Y'))).toEqual([
      `Y: seen ${y1.messageId}`,
      `Y: seen ${y2.messageId}`,
    ]);
    expect(notes).toContain(`X: seen ${x.messageId}`);
    expect(calls).toEqual({ X: 3, Y: 5 });
    expect(await countDeadLetters(redis, bridgeKeys(prefix))).toBe(0);
  });

  it('an event that failed on every attempt is dead-lettered alone, after exactly worker.attempts runs', async () => {
    const { notes, calls } = await start({ C: [true, true, true, true] });
    const c = makeEvent({ conversationId: 'C' });
    const d = makeEvent({ conversationId: 'D' });
    await ingest([c, d]);
    await waitFor(async () => (await countDeadLetters(redis, bridgeKeys(prefix))) === 1, {
      timeoutMs: 15_000,
      what: "C's dead letter",
    });
    expect(notes).toEqual([`D: seen ${d.messageId}`]);
    expect(calls.C).toBe(3);
    const [letter] = await listDeadLetters(redis, bridgeKeys(prefix));
    expect(letter).toMatchObject({ eventKey: c.key, conversationId: 'C', attempts: 3 });
    expect(letter?.data).toMatchObject({ events: [{ event: { key: c.key } }] });
    // The conversation moved on: nothing of C is left in its order.
    expect(await redis.zcard(bridgeKeys(prefix).order('C'))).toBe(0);
  });
});
