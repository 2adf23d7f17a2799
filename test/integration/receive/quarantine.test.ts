import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import {
  createEventProducer,
  DEFAULT_EVENT_JOB_OPTIONS,
  type EventProducer,
} from '../../../src/receive/event-producer.js';
import {
  getQuarantined,
  listQuarantine,
  purgeQuarantine,
  type QuarantineStore,
  quarantineBody,
} from '../../../src/receive/quarantine-store.js';
import { replayQuarantined } from '../../../src/receive/replay-quarantined.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { webhookFixture } from '../../fixtures/webhooks/index.js';
import { cli } from '../../support/cli-in-process.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';
import { postWebhook } from './webhook-client.js';

const SECRET = 'whsec-quarantine-91be';
const AUTH = { 'content-type': 'application/json', authorization: SECRET };

describe('quarantine: stored, listed, shown, replayed, purged (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let store: QuarantineStore;
  let receiver: Receiver;
  let producer: EventProducer;
  let queue: Queue;
  let url: string;

  const connection = () => ['--redis-url', testRedisUrl(), '--prefix', prefix];
  const waiting = async () =>
    (await queue.getJobs(['waiting'])).flatMap((j) =>
      EventBatchDataSchema.parse(j.data).events.map((item) => item.event),
    );

  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = uniqueName('t-quar');
    store = { redis, keys: bridgeKeys(prefix) };
    queue = new Queue('events', { connection: redis, prefix });
    receiver = createReceiver({ secrets: [SECRET], redisUrl: testRedisUrl(), prefix });
    url = `${(await receiver.listen()).url}/webhooks/platform`;
    producer = createEventProducer({
      redisUrl: testRedisUrl(),
      prefix,
      dedupeWindowSeconds: 600,
      jobOptions: DEFAULT_EVENT_JOB_OPTIONS,
      commandTimeoutMs: 1000,
      logger: pino({ level: 'silent' }),
    });
    await producer.connected(5000);
  });
  afterEach(async () => {
    await receiver.close();
    await producer.close();
    await queue.close();
    await deleteKeys(redis, prefix);
  });

  /** An entry as an older version would have left it: a body this version understands. */
  const storeUnderstandable = async () => {
    const raw = Buffer.from(webhookFixture('ai-message-generated').raw);
    const { entry } = await quarantineBody(store, {
      reason: 'unknown_event',
      message: 'event name "ai.message_generated" was unknown to the version that received it',
      eventName: 'ai.message_generated',
      conversationId: 'conv_8f3a2b1c',
      rawBody: raw,
      receivedAt: new Date('2026-02-01T10:00:00.000Z'),
    });
    return entry;
  };

  it('keeps what the receiver could not understand, with reason, time and the raw body, never the secret', async () => {
    const raw = webhookFixture('missing-conversation-id').raw;
    await postWebhook(url, raw, AUTH);
    const [entry] = await listQuarantine(store);
    expect(entry).toMatchObject({
      reason: 'missing_conversation_id',
      eventName: 'channel.message_in',
      conversationId: null,
      body: raw,
      bodyBytes: Buffer.byteLength(raw),
      truncated: false,
    });
    expect(entry?.id).toMatch(/^q-[0-9a-f]{24}$/);
    expect(Date.parse(entry?.receivedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(await redis.hgetall(store.keys.quarantineEntries))).not.toContain(SECRET);
  });

  it('replays an entry this version understands: queued once, entry removed, original receive time kept', async () => {
    const entry = await storeUnderstandable();
    const result = await replayQuarantined({ store, ingest: producer.ingest }, entry.id);
    expect(result.outcome).toBe('queued');
    const [event] = await waiting();
    expect(event).toMatchObject({
      kind: 'ai_reply',
      key: 'ai.message_generated|msg_01HQX80AI1',
      receivedAt: entry.receivedAt,
    });
    expect(await listQuarantine(store)).toHaveLength(0);
  });

  it('replays as a duplicate when the event was stored meanwhile (no second job)', async () => {
    await postWebhook(url, webhookFixture('ai-message-generated').raw, AUTH);
    const entry = await storeUnderstandable();
    const result = await replayQuarantined({ store, ingest: producer.ingest }, entry.id);
    expect(result.outcome).toBe('duplicate');
    expect(await waiting()).toHaveLength(1);
  });

  it.each([
    [
      'still unknown event name',
      'unknown-event',
      /still has an event name this version does not know \("channel\.message_reaction"\); replay it after upgrading/,
    ],
    [
      'still without conversation id',
      'missing-conversation-id',
      /still cannot be understood \(missing_conversation_id\): a "channel\.message_in" event needs "conversation_id"/,
    ],
  ])('refuses to replay an entry %s and keeps it', async (_label, fixture, message) => {
    await postWebhook(url, webhookFixture(fixture).raw, AUTH);
    const [entry] = await listQuarantine(store);
    const id = entry?.id ?? '';
    await expect(replayQuarantined({ store, ingest: producer.ingest }, id)).rejects.toMatchObject({
      code: 'QUARANTINE_NOT_REPLAYABLE',
      message: expect.stringMatching(message),
    });
    expect((await getQuarantined(store, id)).id).toBe(id);
    expect(await waiting()).toHaveLength(0);
  });

  it('refuses to replay a truncated body', async () => {
    const small = { ...store, maxBodyBytes: 1024 };
    const raw = Buffer.from(
      JSON.stringify({ event: 'channel.message_in', conversation_id: 'c', pad: 'x'.repeat(3000) }),
    );
    const { entry } = await quarantineBody(small, {
      reason: 'invalid_field',
      message: 'x',
      eventName: null,
      conversationId: null,
      rawBody: raw,
      receivedAt: new Date(),
    });
    expect(entry).toMatchObject({ truncated: true, bodyBytes: raw.length });
    expect(entry.body).toHaveLength(1024);
    await expect(replayQuarantined({ store, ingest: producer.ingest }, entry.id)).rejects.toMatchObject({
      code: 'QUARANTINE_NOT_REPLAYABLE',
    });
  });

  it('says which id was not found', async () => {
    await expect(getQuarantined(store, 'q-nope')).rejects.toMatchObject({
      code: 'QUARANTINE_NOT_FOUND',
      message: expect.stringContaining('quarantine entry "q-nope" was not found'),
    });
  });

  describe('convo-bridge quarantine (CLI)', () => {
    it('lists entries, newest first', async () => {
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      await postWebhook(url, webhookFixture('unknown-event').raw, AUTH);
      const { code, stdout } = await cli(['quarantine', 'list', ...connection()]);
      expect(code).toBe(0);
      const lines = stdout.split('\n');
      expect(lines[0]).toMatch(
        new RegExp(`^2 quarantined bodies under prefix "${prefix}" at 127\\.0\\.0\\.1:\\d+ db 0$`),
      );
      expect(lines[1]).toMatch(/^ID +RECEIVED AT +REASON +EVENT +CONVERSATION +SIZE +WHY$/);
      expect(lines[2]).toMatch(
        /^q-[0-9a-f]{24} {2}\S+Z {2}unknown_event +channel\.message_reaction {2}conv_8f3a2b1c {2}\d+B {2}\S/,
      );
      expect(lines[3]).toMatch(/^q-[0-9a-f]{24} {2}\S+Z {2}missing_event_name +- +- +\d+B {2}\S/);
    });

    it('lists as JSON with --json', async () => {
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      const { code, stdout } = await cli(['quarantine', 'list', '--json', ...connection()]);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toEqual(await listQuarantine(store));
    });

    it('says so when the quarantine is empty', async () => {
      const { code, stdout } = await cli(['quarantine', 'list', ...connection()]);
      expect(code).toBe(0);
      expect(stdout).toMatch(
        new RegExp(
          `^no quarantined bodies under prefix "${prefix}" at 127\\.0\\.0\\.1:\\d+ db 0 \\(from --redis-url\\)\n`,
        ),
      );
    });

    it('shows one entry with its body', async () => {
      await postWebhook(url, webhookFixture('uncoercible-field').raw, AUTH);
      const [entry] = await listQuarantine(store);
      const { code, stdout } = await cli(['quarantine', 'show', entry?.id ?? '', ...connection()]);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toEqual(entry);
    });

    it('replays one entry and removes it', async () => {
      const entry = await storeUnderstandable();
      const { code, stdout } = await cli(['quarantine', 'replay', entry.id, ...connection()]);
      expect(code).toBe(0);
      expect(stdout).toMatch(
        new RegExp(
          `^${entry.id} replayed: queued as job b-[0-9a-z]+-[0-9a-f]{12} \\(event key ai\\.message_generated\\|msg_01HQX80AI1\\); entry removed\\n$`,
        ),
      );
      expect(await waiting()).toHaveLength(1);
      expect(await listQuarantine(store)).toHaveLength(0);
    });

    it('purges every entry with --all (as dlq purge does), and refuses a purge that names nothing', async () => {
      await postWebhook(url, webhookFixture('missing-event').raw, AUTH);
      await postWebhook(url, webhookFixture('unknown-event').raw, AUTH);
      const bare = await cli(['quarantine', 'purge', ...connection()]);
      expect(bare.code).toBe(1);
      expect(bare.stderr).toContain('or pass --all');
      const { code, stdout } = await cli(['quarantine', 'purge', '--all', ...connection()]);
      expect([code, stdout]).toEqual([0, 'removed 2 quarantine entries\n']);
      expect(await purgeQuarantine(store)).toBe(0);
    });

    it.each([
      [
        'show of an unknown id',
        () => ['quarantine', 'show', 'q-missing', ...connection()],
        1,
        /^convo-bridge: quarantine entry "q-missing" was not found under prefix "t-quar-[0-9a-f]+:bridge"/,
      ],
      [
        'replay of an unknown id',
        () => ['quarantine', 'replay', 'q-missing', ...connection()],
        1,
        /^convo-bridge: quarantine entry "q-missing" was not found/,
      ],
      [
        'an http:// URL',
        () => ['quarantine', 'list', '--redis-url', 'http://127.0.0.1:6379'],
        1,
        /^convo-bridge: --redis-url must be a redis:\/\/ or rediss:\/\/ URL/,
      ],
      [
        'a prefix with a colon',
        () => ['quarantine', 'list', '--redis-url', testRedisUrl(), '--prefix', 'a:b'],
        1,
        /^convo-bridge: --prefix must be 1-64 letters/,
      ],
      [
        'a limit of 0',
        () => ['quarantine', 'list', '--limit', '0', ...connection()],
        1,
        /^convo-bridge: --limit must be a whole number from 1 to 10000/,
      ],
    ])('fails with a clear message on %s', async (_label, args, exitCode, message) => {
      const { code, stderr } = await cli(args());
      expect(code).toBe(exitCode);
      expect(stderr).toMatch(message);
    });

    it('fails with exit code 2 when Redis cannot be reached', async () => {
      const port = await findFreePort();
      const { code, stderr } = await cli(['quarantine', 'list', '--redis-url', `redis://127.0.0.1:${port}`]);
      expect(code).toBe(2);
      expect(stderr).toMatch(
        new RegExp(
          `^convo-bridge: cannot reach Redis at 127\\.0\\.0\\.1:${port} \\(from --redis-url\\): .*ECONNREFUSED`,
        ),
      );
    });

    it('prints help with examples', async () => {
      const { code, stdout } = await cli(['quarantine', '--help']);
      expect(code).toBe(0);
      expect(stdout).toContain('convo-bridge quarantine replay q-');
      expect(stdout).toContain('list');
      expect(stdout).toContain('purge');
    });
  });
});
