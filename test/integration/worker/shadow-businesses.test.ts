import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseWorkerSettings } from '../../../src/config/config-schema.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { businessNaming } from '../../../src/events/business-naming.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { ingestItems } from '../../../src/queue/ingest-event.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { scanKeys } from '../../../src/redis/scan-keys.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import type { WorkerBusiness } from '../../../src/worker/businesses/worker-business.js';
import { type BridgeWorker, createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import type { ShadowCandidate } from '../../../src/worker/shadow/shadow-observer.js';
import { readShadowExamples, readShadowTotals } from '../../../src/worker/shadow/shadow-store.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

// Issue 28 with several businesses (issue 26): each business's shadow rules are its own; their
// differences go under its keys and its metric labels, and a business without shadow rules keeps
// none. Real Redis, real BullMQ, the worker as the bridge builds it.

const CONFIG = `
platform: { base_url: "https://platform.invalid", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: seen
    on: message_in
    then: [ { note: "seen {{event.messageId}}" } ]
`;
const { rules } = parseConfigText(CONFIG, { fileName: 'active.yaml', env: {} });
const candidateRules = parseConfigText(CONFIG.replace('"seen ', '"noticed '), {
  fileName: 'c.yaml',
  env: {},
}).rules;

describe('shadow rules of several businesses (real Redis, real BullMQ)', () => {
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
  });

  it("keeps each business's differences under its own keys and labels; a business without shadow rules keeps none", async () => {
    prefix = uniqueName('t-shadow-biz');
    const notes: string[] = [];
    const platform: PlatformPort = {
      addNote: async (conversationId, note) => {
        notes.push(`${conversationId}: ${note}`);
        return {};
      },
      sendMessage: async () => ({}),
      markNeedHuman: async () => undefined,
      async *history() {},
    };
    const shadow: ShadowCandidate = { rules: rulesPort(candidateRules), examples: 5, maxAgeMs: 3_600_000 };
    const business = (id: string, withShadow: boolean): WorkerBusiness => ({
      id,
      naming: businessNaming(id, false),
      platform,
      classifyPlatformError: () => undefined,
      forwarder: { forward: async () => ({ status: 200 }) },
      rules: () => rulesPort(rules),
      shadow: () => (withShadow ? shadow : undefined),
    });
    const registry = new Registry();
    worker = createBridgeWorker({
      redisUrl: testRedisUrl(),
      prefix,
      businesses: [business('toko-a', true), business('toko-b', false)],
      settings: parseWorkerSettings({ concurrency: 4 }),
      registry,
    });
    await worker.start();
    queue = new Queue('events', { connection: redis, prefix });
    const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
    const event = makeEvent({ conversationId: 'conv-1' });
    const items: { business: string; event: ConversationEvent }[] = [
      { business: 'toko-a', event: { ...event, key: `toko-a:${event.key}` } },
      { business: 'toko-b', event: { ...event, key: `toko-b:${event.key}` } },
    ];
    await ingestItems(
      {
        redis,
        queue,
        keys: layout.global,
        keysOf: (naming) => layout.forNaming(naming).global,
        dedupeWindowSeconds: 60,
        jobOptions: { attempts: 8 },
      },
      items.map(({ business, event }) => ({ naming: businessNaming(business, false), event })),
    );
    await waitFor(() => notes.length === 2, { timeoutMs: 10_000, what: "both businesses' notes" });
    // The active rules acted for both, the candidate for neither.
    expect(notes).toEqual([`conv-1: seen ${event.messageId}`, `conv-1: seen ${event.messageId}`]);

    const a = layout.forNaming(businessNaming('toko-a', false)).global;
    const b = layout.forNaming(businessNaming('toko-b', false)).global;
    await waitFor(async () => (await readShadowTotals(redis, a)).get('seen') === 1, {
      timeoutMs: 5_000,
      what: "toko-a's difference",
    });
    const kept = await readShadowExamples(redis, a);
    expect(kept.examples.map((e) => [e.eventKey, e.active.actions, e.candidate.actions])).toEqual([
      [`toko-a:${event.key}`, [`note "seen ${event.messageId}"`], [`note "noticed ${event.messageId}"`]],
    ]);
    expect(await redis.exists(b.shadowExamples, b.shadowTotals)).toBe(0);
    const metrics = await registry.metrics();
    expect(metrics).toContain('convo_bridge_shadow_differences_total{rule="seen",business="toko-a"} 1');
    expect(metrics).toContain('convo_bridge_shadow_events_total{business="toko-a"} 1');
    expect(metrics).not.toMatch(/convo_bridge_shadow_\w+\{[^}]*business="toko-b"/);

    // The counts kept in memory are written when the worker closes.
    await worker.close(0);
    worker = undefined;
    const hours = await scanKeys(redis, `${a.shadowCounts(0).slice(0, -1)}*`);
    expect(hours).toHaveLength(1);
    expect(await redis.hgetall(hours[0] as string)).toMatchObject({ e: '1', x: '1', 'd|seen': '1' });
  });
});
