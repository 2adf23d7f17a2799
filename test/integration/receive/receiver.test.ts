import { Writable } from 'node:stream';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { bridgeKeys, dedupeMarker, orderMember } from '../../../src/queue/redis-keys.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import { listQuarantine } from '../../../src/receive/quarantine-store.js';
import type { ReceiverOptions } from '../../../src/receive/receiver-options.js';
import { WEBHOOK_FIXTURES, webhookFixture } from '../../fixtures/webhooks/index.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';
import { postWebhook } from './webhook-client.js';

const SECRET = 'whsec-itest-5b1e0c2d9a';
const ROTATED = 'whsec-itest-new-77f3aa';
const JSON_HEADERS = { 'content-type': 'application/json' };
const AUTH = { ...JSON_HEADERS, authorization: SECRET };

const UNAUTHORIZED = {
  success: false,
  error:
    'webhook secret missing or wrong: send the secret shown in the dashboard webhook settings as ' +
    '"Authorization: <secret>", "Authorization: Bearer <secret>" or "secret: <secret>", and make sure ' +
    'it is one of receiver.secrets',
};

describe('webhook receiver (real Redis, real HTTP on loopback)', () => {
  let redis: Redis;
  let prefix: string;
  let receiver: Receiver;
  let base: string;
  let url: string;
  let queue: Queue;
  let registry: Registry;
  let logLines: Record<string, unknown>[];

  const start = async (overrides: Partial<ReceiverOptions> = {}) => {
    logLines = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line));
        done();
      },
    });
    registry = new Registry();
    receiver = createReceiver({
      secrets: [SECRET, ROTATED],
      redisUrl: testRedisUrl(),
      prefix,
      dedupeWindowSeconds: 600,
      metrics: registry,
      logger: pino({ level: 'debug' }, sink),
      ...overrides,
    });
    const listening = await receiver.listen(0, '127.0.0.1');
    base = listening.url;
    url = `${base}/webhooks/platform`;
  };

  const jobs = () => queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized']);
  const countOf = async (outcome: string) => {
    const metric = await registry.getSingleMetric('convo_bridge_webhooks_total')?.get();
    return metric?.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };

  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = uniqueName('t-recv');
    queue = new Queue('events', { connection: redis, prefix });
    await start();
  });
  afterEach(async () => {
    await receiver.close();
    await queue.close();
    await deleteKeys(redis, prefix);
  });

  describe('authentication (from headers, constant time)', () => {
    it.each([
      ['Authorization: <secret>', { authorization: SECRET }],
      ['Authorization: Bearer <secret>', { authorization: `Bearer ${SECRET}` }],
      ['secret: <secret>', { secret: SECRET }],
      ['the second accepted secret (rotation)', { authorization: ROTATED }],
      ['the second accepted secret as Bearer', { authorization: `Bearer ${ROTATED}` }],
    ])('accepts %s', async (_label, headers) => {
      const answer = await postWebhook(url, webhookFixture('channel-message-in').raw, {
        ...JSON_HEADERS,
        ...headers,
      });
      expect(answer).toMatchObject({ status: 200, json: { success: true }, outcome: 'queued' });
    });

    it.each([
      ['no secret header', {}],
      ['an empty Authorization', { authorization: '' }],
      ['"Bearer" alone', { authorization: 'Bearer' }],
      ['a shorter secret', { authorization: SECRET.slice(0, 5) }],
      ['a longer secret', { authorization: `${SECRET}-and-more` }],
      [
        'a multibyte secret (UTF-8 on the wire)',
        { authorization: Buffer.from('rahasia-ñ-🔑', 'utf8').toString('latin1') },
      ],
      ['a revoked secret', { authorization: 'whsec-itest-old-000000' }],
      ['the secret in the wrong header', { 'x-webhook-secret': SECRET }],
      ['an empty secret header', { secret: '' }],
    ])('answers 401 to %s, without reading the body', async (_label, headers) => {
      const answer = await postWebhook(url, webhookFixture('channel-message-in').raw, {
        ...JSON_HEADERS,
        ...headers,
      });
      expect(answer).toMatchObject({ status: 401, json: UNAUTHORIZED, outcome: 'unauthorized' });
      expect(answer.contentType).toBe('application/json; charset=utf-8');
      expect(await jobs()).toHaveLength(0);
    });

    it('logs a 401 as a warning with the remote address and never the secret', async () => {
      const attempt = 'whsec-guess-123456';
      await postWebhook(url, '{}', { ...JSON_HEADERS, authorization: attempt, secret: SECRET.slice(1) });
      const warning = logLines.find((l) => l.outcome === 'unauthorized');
      expect(warning).toMatchObject({
        level: 40,
        remoteAddress: '127.0.0.1',
        secretHeaders: ['authorization', 'secret'],
      });
      const everything = JSON.stringify(logLines);
      expect(everything).not.toContain(attempt);
      expect(everything).not.toContain(SECRET.slice(1));
    });
  });

  describe('bodies that are not one JSON object', () => {
    it.each([
      [
        'malformed JSON',
        '{"event": "channel.message_in",',
        'the body is not valid JSON; send the event as one JSON object',
      ],
      ['plain text', 'hello', 'the body is not valid JSON; send the event as one JSON object'],
      ['an empty body', '', 'the body is empty; send the event as one JSON object'],
      ['only whitespace', '  \n ', 'the body is empty; send the event as one JSON object'],
      [
        'an array',
        '[{"event":"test"}]',
        'the body is an array, not a JSON object; the platform sends one JSON object per event',
      ],
      [
        'a string',
        '"test"',
        'the body is a string, not a JSON object; the platform sends one JSON object per event',
      ],
      [
        'a number',
        '42',
        'the body is a number, not a JSON object; the platform sends one JSON object per event',
      ],
      [
        'a boolean',
        'true',
        'the body is a boolean, not a JSON object; the platform sends one JSON object per event',
      ],
      ['null', 'null', 'the body is null, not a JSON object; the platform sends one JSON object per event'],
    ])('answers 400 to %s', async (_label, body, error) => {
      const answer = await postWebhook(url, body, AUTH);
      expect(answer).toMatchObject({ status: 400, json: { success: false, error }, outcome: 'bad_request' });
      expect(await jobs()).toHaveLength(0);
    });

    it('accepts a body that starts with a UTF-8 byte order mark', async () => {
      const answer = await postWebhook(url, `\uFEFF${webhookFixture('channel-message-in').raw}`, AUTH);
      expect(answer).toMatchObject({ status: 200, outcome: 'queued' });
    });
  });

  describe('size and content type', () => {
    const twoMegabytes = JSON.stringify({
      event: 'channel.message_in',
      padding: 'x'.repeat(2 * 1024 * 1024),
    });
    const tooLarge = {
      success: false,
      error:
        'the body is larger than the limit of 1048576 bytes; raise receiver.bodyLimitBytes if such events are real',
    };

    it('answers 413 to a 2 MB body with a Content-Length', async () => {
      const answer = await postWebhook(url, twoMegabytes, AUTH);
      expect(answer).toMatchObject({ status: 413, json: tooLarge, outcome: 'payload_too_large' });
    });

    it('answers 413 to a 2 MB body sent chunked (cut off while reading)', async () => {
      const bytes = new TextEncoder().encode(twoMegabytes);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 64 * 1024)
            controller.enqueue(bytes.subarray(i, i + 64 * 1024));
          controller.close();
        },
      });
      const answer = await postWebhook(url, stream, AUTH);
      expect(answer).toMatchObject({ status: 413, json: tooLarge, outcome: 'payload_too_large' });
    });

    it('accepts a body just under the limit', async () => {
      const body = JSON.stringify({ event: 'test', padding: 'x'.repeat(1024 * 1024 - 100) });
      expect((await postWebhook(url, body, AUTH)).status).toBe(200);
    });

    it.each([
      [
        'text/plain',
        { 'content-type': 'text/plain' },
        'Content-Type "text/plain" is not JSON; send the body with "Content-Type: application/json"',
      ],
      [
        'form-urlencoded',
        { 'content-type': 'application/x-www-form-urlencoded' },
        'Content-Type "application/x-www-form-urlencoded" is not JSON; send the body with "Content-Type: application/json"',
      ],
      [
        'no content type',
        {},
        'the request has no Content-Type; send the body as JSON with "Content-Type: application/json"',
      ],
      [
        'JSON in latin1',
        { 'content-type': 'application/json; charset=iso-8859-1' },
        'charset "iso-8859-1" is not supported; send the JSON body as UTF-8',
      ],
    ])('answers 415 to %s', async (_label, headers, error) => {
      // A byte body, so that fetch adds no content type of its own.
      const body = new TextEncoder().encode(webhookFixture('channel-message-in').raw);
      const answer = await postWebhook(url, body, { authorization: SECRET, ...headers });
      expect(answer).toMatchObject({
        status: 415,
        json: { success: false, error },
        outcome: 'unsupported_media_type',
      });
    });

    it.each([
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/vnd.platform+json',
    ])('accepts %s', async (contentType) => {
      const answer = await postWebhook(url, webhookFixture('channel-message-in').raw, {
        authorization: SECRET,
        'content-type': contentType,
      });
      expect(answer).toMatchObject({ status: 200, outcome: 'queued' });
    });
  });

  describe('every documented payload variant', () => {
    it.each(WEBHOOK_FIXTURES.map((f) => [f.name, f.variant, f] as const))(
      '%s (%s)',
      async (_n, _v, fixture) => {
        const before = Date.now();
        const answer = await postWebhook(url, fixture.raw, AUTH);
        expect(answer).toMatchObject({
          status: 200,
          json: { success: true },
          outcome: fixture.expect.outcome,
        });
        const stored = await jobs();
        const expected = fixture.expect;
        if (expected.outcome === 'queued') {
          expect(stored).toHaveLength(1);
          const batch = EventBatchDataSchema.parse(stored[0]?.data);
          expect(batch.events).toHaveLength(1);
          const data = batch.events[0] as (typeof batch.events)[number];
          expect(data.event).toMatchObject(expected.event);
          // The marker names the batch job that carries the event.
          expect(await redis.get(bridgeKeys(prefix).dedupe(data.event.key))).toBe(
            dedupeMarker(data.arrival, stored[0]?.id ?? '', data.event.conversationId ?? ''),
          );
          const receivedAt = Date.parse(data.event.receivedAt);
          expect(receivedAt).toBeGreaterThanOrEqual(before - 5);
          if (expected.occurredAtIsReceivedAt) expect(data.event.occurredAt).toBe(data.event.receivedAt);
          expect(await listQuarantine({ redis, keys: bridgeKeys(prefix) })).toHaveLength(0);
        } else if (expected.outcome === 'test') {
          expect(stored).toHaveLength(0);
          expect(await listQuarantine({ redis, keys: bridgeKeys(prefix) })).toHaveLength(0);
        } else {
          expect(stored).toHaveLength(0);
          const entries = await listQuarantine({ redis, keys: bridgeKeys(prefix) });
          expect(entries).toHaveLength(1);
          expect(entries[0]).toMatchObject({ reason: expected.reason, body: fixture.raw, truncated: false });
          expect(JSON.stringify(entries)).not.toContain(SECRET);
        }
      },
    );

    it('counts unknown events and quarantined bodies separately', async () => {
      await postWebhook(url, webhookFixture('unknown-event').raw, AUTH);
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      await postWebhook(url, webhookFixture('missing-conversation-id').raw, AUTH);
      await postWebhook(url, webhookFixture('test-ping').raw, AUTH);
      expect(await countOf('unknown_event')).toBe(1);
      expect(await countOf('quarantined')).toBe(2);
      expect(await countOf('test')).toBe(1);
    });

    it('keeps one quarantine entry for a redelivered body it cannot understand', async () => {
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      expect(await listQuarantine({ redis, keys: bridgeKeys(prefix) })).toHaveLength(1);
    });

    it('bounds the quarantine to quarantineMax entries, dropping the oldest', async () => {
      await receiver.close();
      await start({ quarantineMax: 3 });
      for (let i = 0; i < 5; i += 1) {
        await postWebhook(url, JSON.stringify({ event: `shop.thing_${i}` }), AUTH);
      }
      const entries = await listQuarantine({ redis, keys: bridgeKeys(prefix) });
      expect(entries.map((e) => e.eventName)).toEqual(['shop.thing_4', 'shop.thing_3', 'shop.thing_2']);
      expect(await redis.hlen(bridgeKeys(prefix).quarantineEntries)).toBe(3);
    });
  });

  describe('exactly once', () => {
    it('stores a sequential redelivery once and answers it 200', async () => {
      const raw = webhookFixture('channel-message-in').raw;
      const first = await postWebhook(url, raw, AUTH);
      const second = await postWebhook(url, raw, { ...JSON_HEADERS, secret: SECRET });
      expect([first.outcome, second.outcome]).toEqual(['queued', 'duplicate']);
      expect(second).toMatchObject({ status: 200, json: { success: true } });
      expect(await jobs()).toHaveLength(1);
    });

    it('recognises a body without message id by its hash, whatever the key order', async () => {
      const body = JSON.parse(webhookFixture('no-message-id').raw) as Record<string, unknown>;
      const reordered = JSON.stringify(Object.fromEntries(Object.entries(body).reverse()));
      const first = await postWebhook(url, JSON.stringify(body), AUTH);
      const second = await postWebhook(url, reordered, AUTH);
      expect([first.outcome, second.outcome]).toEqual(['queued', 'duplicate']);
      expect(await jobs()).toHaveLength(1);
    });

    it('creates exactly one job when 20 copies arrive at once', async () => {
      const raw = webhookFixture('media-with-caption').raw;
      const answers = await Promise.all(Array.from({ length: 20 }, () => postWebhook(url, raw, AUTH)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(answers.filter((a) => a.outcome === 'queued')).toHaveLength(1);
      expect(answers.filter((a) => a.outcome === 'duplicate')).toHaveLength(19);
      expect(await jobs()).toHaveLength(1);
      expect(await countOf('duplicate')).toBe(19);
    });

    it('still recognises a redelivery after the first job completed and was removed', async () => {
      await receiver.close();
      await start({ jobOptions: { removeOnComplete: true } });
      const raw = webhookFixture('ai-message-generated').raw;
      expect((await postWebhook(url, raw, AUTH)).outcome).toBe('queued');
      const processed: string[] = [];
      const keys = bridgeKeys(prefix);
      const worker = new Worker(
        'events',
        async (job) => {
          processed.push(job.id ?? '');
          // What the bridge's worker does when an event is done: it leaves its conversation's order.
          for (const { event } of EventBatchDataSchema.parse(job.data).events) {
            await redis.zrem(keys.order(event.conversationId ?? ''), orderMember(job.id ?? '', event.key));
          }
        },
        { connection: connectTestRedis(), prefix },
      );
      try {
        await waitFor(async () => processed.length === 1 && (await jobs()).length === 0, {
          timeoutMs: 10_000,
          what: 'the worker to complete and remove the job',
        });
      } finally {
        await worker.close();
        await worker.disconnect();
      }
      const again = await postWebhook(url, raw, AUTH);
      expect(again).toMatchObject({ status: 200, json: { success: true }, outcome: 'duplicate' });
      expect(await jobs()).toHaveLength(0);
      expect(processed).toHaveLength(1);
    });

    it('applies the bounded job options by default (retention: done jobs removed at once)', async () => {
      await postWebhook(url, webhookFixture('channel-message-in').raw, AUTH);
      const [job] = await jobs();
      expect(job?.opts).toMatchObject({
        attempts: 5,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: { count: 0 },
        removeOnFail: { age: 604_800, count: 10_000 },
      });
    });
  });

  describe('routes, health and metrics', () => {
    it.each(['GET', 'PUT', 'DELETE', 'PATCH'])(
      'answers %s on the webhook path with 405 JSON',
      async (method) => {
        const response = await fetch(url, { method, headers: { authorization: SECRET } });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('POST');
        expect(await response.json()).toEqual({
          success: false,
          error: 'only POST is accepted on the webhook path',
        });
      },
    );

    it('answers an unknown path with 404 JSON, never an HTML page', async () => {
      const response = await fetch(`${base}/wp-admin`, { method: 'POST' });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.json()).toEqual({
        success: false,
        error: 'nothing at POST /wp-admin; webhooks are POSTed to /webhooks/platform',
      });
    });

    it('answers a malformed URL with JSON, never a stack trace', async () => {
      const response = await fetch(`${base}/webhooks/%E0%A4%A`, { method: 'POST' });
      expect(response.status).toBeLessThan(500);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.text()).not.toMatch(/<html|at .*\.js/i);
    });

    it('serves /healthz and /readyz', async () => {
      const health = await fetch(`${base}/healthz`);
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
      const ready = await fetch(`${base}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
      expect(await redis.pttl(bridgeKeys(prefix).health)).toBeGreaterThan(0);
      expect(receiver.isReady()).toBe(true);
    });

    it('counts requests by outcome and times the answers, served at /metrics', async () => {
      await postWebhook(url, webhookFixture('channel-message-in').raw, AUTH);
      await postWebhook(url, webhookFixture('channel-message-in').raw, AUTH);
      await postWebhook(url, '{}', JSON_HEADERS);
      const text = await (await fetch(`${base}/metrics`)).text();
      // A receiver of path and secrets serves one business, labelled `default`.
      expect(text).toContain('convo_bridge_webhooks_total{outcome="queued",business="default"} 1');
      expect(text).toContain('convo_bridge_webhooks_total{outcome="duplicate",business="default"} 1');
      expect(text).toContain('convo_bridge_webhooks_total{outcome="unauthorized",business="default"} 1');
      expect(text).toContain('convo_bridge_webhook_ack_seconds_count{outcome="queued",business="default"} 1');
    });

    it('logs one debug line per stored event with its conversation id and event key', async () => {
      await postWebhook(url, webhookFixture('channel-message-in').raw, AUTH);
      expect(logLines).toContainEqual(
        expect.objectContaining({
          level: 20,
          outcome: 'queued',
          conversationId: 'conv_8f3a2b1c',
          eventKey: 'channel.message_in|msg_01HQX7Z9K2',
        }),
      );
    });

    it('closes idempotently and is no longer ready afterwards', async () => {
      await Promise.all([receiver.close(), receiver.close()]);
      expect(receiver.isReady()).toBe(false);
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    });
  });
});
