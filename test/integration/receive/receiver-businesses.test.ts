import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { businessNaming } from '../../../src/events/business-naming.js';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import { listQuarantine } from '../../../src/receive/quarantine-store.js';
import type { ReceiverBusiness } from '../../../src/receive/receiver-options.js';
import { webhookFixture } from '../../fixtures/webhooks/index.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';
import { postWebhook } from './webhook-client.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
const A: ReceiverBusiness = { id: 'toko-a', path: '/webhooks/toko-a', secrets: ['whsec-a-1f2e3d'] };
const B: ReceiverBusiness = { id: 'toko-b', path: '/webhooks/toko-b', secrets: ['whsec-b-9c8b7a'] };
const C: ReceiverBusiness = { id: 'toko-c', path: '/hooks/c', secrets: ['whsec-c-445566'] };

/**
 * A receiver of several businesses (issue 26): each business's webhooks arrive only on its path
 * with its secrets, and are stored with its keys, so the same message id for two businesses is
 * two events. Real Redis, real HTTP on loopback.
 */
describe('receiver of several businesses', () => {
  let redis: Redis;
  let prefix: string;
  let receiver: Receiver;
  let base: string;
  let queue: Queue;
  let registry: Registry;

  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = uniqueName('t-recv-biz');
    queue = new Queue('events', { connection: redis, prefix });
    registry = new Registry();
    receiver = createReceiver({
      businesses: [A, B],
      redisUrl: testRedisUrl(),
      prefix,
      dedupeWindowSeconds: 600,
      metrics: registry,
    });
    base = (await receiver.listen(0, '127.0.0.1')).url;
  });
  afterEach(async () => {
    await receiver.close();
    await queue.close();
    await deleteKeys(redis, prefix);
  });

  const post = (
    business: ReceiverBusiness,
    secret: string,
    body = webhookFixture('channel-message-in').raw,
  ) => postWebhook(`${base}${business.path}`, body, { ...JSON_HEADERS, authorization: secret });
  const jobs = () => queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized']);

  it("accepts each business's webhook on its own path with its own secret", async () => {
    expect(await post(A, 'whsec-a-1f2e3d')).toMatchObject({ status: 200, outcome: 'queued' });
    expect(await post(B, 'whsec-b-9c8b7a')).toMatchObject({ status: 200, outcome: 'queued' });
  });

  it("answers 401 to another business's valid secret, and stores nothing", async () => {
    expect(await post(A, 'whsec-b-9c8b7a')).toMatchObject({ status: 401, outcome: 'unauthorized' });
    expect(await post(B, 'whsec-a-1f2e3d')).toMatchObject({ status: 401, outcome: 'unauthorized' });
    expect(await jobs()).toHaveLength(0);
  });

  it('answers 404 on a path no business has, naming no business', async () => {
    const answer = await postWebhook(`${base}/webhooks/platform`, '{}', {
      ...JSON_HEADERS,
      authorization: 'whsec-a-1f2e3d',
    });
    expect(answer.status).toBe(404);
    expect(JSON.stringify(answer.json)).not.toMatch(/toko/);
  });

  it('stores the same message id of two businesses as two events, each named with its business', async () => {
    expect(await post(A, 'whsec-a-1f2e3d')).toMatchObject({ outcome: 'queued' });
    expect(await post(B, 'whsec-b-9c8b7a')).toMatchObject({ outcome: 'queued' });
    // The same delivery again for A is a duplicate of A's, and of nothing of B's.
    expect(await post(A, 'whsec-a-1f2e3d')).toMatchObject({ status: 200, outcome: 'duplicate' });
    const all = await jobs();
    expect(all).toHaveLength(2);
    const items = all.flatMap((job) => EventBatchDataSchema.parse(job.data).events);
    expect(items.map((item) => item.business).sort()).toEqual(['toko-a', 'toko-b']);
    const keys = items.map((item) => item.event.key);
    expect(new Set(keys).size).toBe(2);
    expect(keys.every((key) => key.startsWith('toko-a:') || key.startsWith('toko-b:'))).toBe(true);
    expect(all.map((job) => job.name).sort()).toEqual(['events:toko-a', 'events:toko-b']);
    // Each business's conversation is kept under its own keys.
    const conversation = items[0]?.event.conversationId ?? '';
    for (const business of [A, B]) {
      expect(
        await redis.zcard(bridgeKeys(prefix, prefix, businessNaming(business.id, false)).order(conversation)),
      ).toBe(1);
    }
    expect(await redis.exists(bridgeKeys(prefix).order(conversation))).toBe(0);
  });

  it("quarantines a body it cannot understand under that business's keys only", async () => {
    const body = JSON.stringify({ event: 'channel.message_in', data: 'not an object' });
    expect(await post(B, 'whsec-b-9c8b7a', body)).toMatchObject({ status: 200 });
    const quarantineOf = (id: string) =>
      listQuarantine({
        redis,
        keys: bridgeKeys(prefix, prefix, businessNaming(id, false)),
        maxEntries: 100,
        maxBodyBytes: 65_536,
      });
    expect(await quarantineOf('toko-b')).toHaveLength(1);
    expect(await quarantineOf('toko-a')).toHaveLength(0);
  });

  it("names the business in a webhook's log line", async () => {
    const lines: Record<string, unknown>[] = [];
    const logged = createReceiver({
      businesses: [A],
      redisUrl: testRedisUrl(),
      prefix,
      logger: pino(
        { level: 'debug' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
            done();
          },
        }),
      ),
    });
    const url = (await logged.listen(0, '127.0.0.1')).url;
    try {
      await postWebhook(`${url}${A.path}`, '{}', { ...JSON_HEADERS, authorization: 'whsec-wrong-000' });
      expect(lines.find((l) => l.outcome === 'unauthorized')).toMatchObject({
        business: 'toko-a',
        status: 401,
      });
    } finally {
      await logged.close();
    }
  });

  it('counts webhooks per business', async () => {
    await post(A, 'whsec-a-1f2e3d');
    await post(B, 'whsec-a-1f2e3d');
    const values = (await registry.getSingleMetric('convo_bridge_webhooks_total')?.get())?.values ?? [];
    expect(values).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { outcome: 'queued', business: 'toko-a' }, value: 1 }),
        expect.objectContaining({ labels: { outcome: 'unauthorized', business: 'toko-b' }, value: 1 }),
      ]),
    );
  });

  it('adds and removes businesses while running: a removed one answers 404, the others go on', async () => {
    receiver.setBusinesses([A, C]);
    expect(await post(C, 'whsec-c-445566')).toMatchObject({ status: 200, outcome: 'queued' });
    expect((await post(B, 'whsec-b-9c8b7a')).status).toBe(404);
    expect(await post(A, 'whsec-a-1f2e3d')).toMatchObject({ status: 200, outcome: 'queued' });
  });

  it('matches a path as Express does: without case and with a trailing slash', async () => {
    const answer = await postWebhook(`${base}/Webhooks/TOKO-A/`, webhookFixture('channel-message-in').raw, {
      ...JSON_HEADERS,
      authorization: 'whsec-a-1f2e3d',
    });
    expect(answer).toMatchObject({ status: 200, outcome: 'queued' });
  });

  it('refuses to be built with both secrets and businesses, or with neither', () => {
    expect(() =>
      createReceiver({ businesses: [A], secrets: ['x-secret-1'], redisUrl: testRedisUrl(), prefix }),
    ).toThrow(/either secrets \(one business\) or businesses \(several\)/);
    expect(() => createReceiver({ redisUrl: testRedisUrl(), prefix })).toThrow(/either secrets/);
  });
});
