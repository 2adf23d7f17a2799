import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { bridgeKeys, eventId } from '../../../src/queue/redis-keys.js';
import { createEventRecorder } from '../../../src/record/create-event-recorder.js';
import {
  findRecordedEvent,
  readRecordedEvents,
  storeRecordedEvent,
} from '../../../src/record/event-store.js';
import { recordedLine } from '../../../src/record/recorded-event.js';
import { cli } from '../../support/cli-in-process.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const FACTS = { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };
const T0 = Date.parse('2026-11-23T03:00:00.000Z');

function line(n: number, minutes = n) {
  const { seq: _seq, ...rest } = recordedLine({
    now: new Date(T0 + minutes * 60_000),
    event: makeEvent({ key: `e|${n}`, messageId: `m${n}`, text: `text ${n}` }),
    facts: FACTS,
    plan: { matched: [], actions: [], blocked: [] },
  });
  return rest;
}

describe('recorded events in Redis (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let keys: ReturnType<typeof bridgeKeys>;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async (context) => {
    prefix = uniqueName('t-rec');
    keys = bridgeKeys(prefix);
    context.onTestFinished(() => deleteKeys(redis, prefix));
  });
  const big = { maxAgeMs: 365 * 86_400_000, maxCount: 1_000 };

  it('keeps at most max_count events, dropping the oldest', async () => {
    for (let n = 1; n <= 5; n++) await storeRecordedEvent(redis, keys, line(n), { ...big, maxCount: 3 });
    const { events, problems } = await readRecordedEvents(redis, keys);
    expect(events.map((e) => e.event.key)).toEqual(['e|3', 'e|4', 'e|5']);
    expect(events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(problems).toEqual([]);
    expect(await redis.hlen(keys.recordedEntries)).toBe(3);
  });

  it('drops events older than max_age as new ones are recorded', async () => {
    await storeRecordedEvent(redis, keys, line(1, 0), big);
    await storeRecordedEvent(redis, keys, line(2, 30), big);
    await storeRecordedEvent(redis, keys, line(3, 90), { ...big, maxAgeMs: 60 * 60_000 });
    const { events } = await readRecordedEvents(redis, keys);
    expect(events.map((e) => e.event.key)).toEqual(['e|2', 'e|3']);
    expect(await redis.hexists(keys.recordedEntries, eventId('e|1'))).toBe(0);
  });

  it('keeps one entry per event when it is recorded again (a redelivery)', async () => {
    await storeRecordedEvent(redis, keys, line(1), big);
    await storeRecordedEvent(redis, keys, line(1, 5), big);
    const { events } = await readRecordedEvents(redis, keys);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ seq: 2, now: new Date(T0 + 5 * 60_000).toISOString() });
  });

  it('reads by time, finds one by sequence, event key or id, and reports unreadable entries', async () => {
    for (let n = 1; n <= 3; n++) await storeRecordedEvent(redis, keys, line(n, n * 10), big);
    await redis.zadd(keys.recordedIndex, T0 + 15 * 60_000, 'bogus');
    await redis.hset(keys.recordedEntries, 'bogus', '{"v":2}');
    const since = await readRecordedEvents(redis, keys, { sinceMs: T0 + 15 * 60_000 });
    expect(since.events.map((e) => e.event.key)).toEqual(['e|2', 'e|3']);
    expect(since.problems).toEqual([expect.stringMatching(/^bogus: /)]);
    expect((await findRecordedEvent(redis, keys, '2'))?.event.key).toBe('e|2');
    expect((await findRecordedEvent(redis, keys, 'e|3'))?.seq).toBe(3);
    expect((await findRecordedEvent(redis, keys, eventId('e|1')))?.event.key).toBe('e|1');
    expect(await findRecordedEvent(redis, keys, 'e|nope')).toBeUndefined();
  });

  it('the recorder port redacts as configured and writes one entry per call', async () => {
    const recorder = createEventRecorder(
      redis,
      keys,
      {
        enabled: true,
        maxAgeMs: big.maxAgeMs,
        maxCount: 10,
        redact: { texts: false, phones: true, emails: true, cards: true, nationalIds: false },
      },
      pino({ level: 'silent' }),
    );
    recorder.record({
      event: makeEvent({
        key: 'e|phone',
        text: 'WA saya 081234567890 ya, budi@mail.co.id, kartu 4111 1111 1111 1111',
      }),
      facts: FACTS,
      now: new Date(T0),
      plan: {
        matched: [{ rule: 'r', cooldownMs: null }],
        actions: [{ id: 'r#0', rule: 'r', type: 'need_human' }],
      },
      blocked: [],
    });
    const [recorded] = await waitFor(
      async () => {
        const { events } = await readRecordedEvents(redis, keys);
        return events.length > 0 ? events : undefined;
      },
      { timeoutMs: 5_000, what: 'the recorded event' },
    );
    expect(recorded).toMatchObject({
      event: { text: 'WA saya ############ ya, ####@####.##.##, kartu #### #### #### ####' },
      plan: { matched: ['r'], actions: [{ id: 'r#0', rule: 'r', type: 'need_human' }], blocked: [] },
      redacted: ['phones', 'emails', 'cards'],
    });
    // `events list` shows which redactions each event had.
    const listed = await cli(['events', 'list', '--redis-url', testRedisUrl(), '--prefix', prefix]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/REDACTED +TEXT/);
    expect(listed.stdout).toMatch(/phones,emails,cards +"WA saya #+ ya, ####@/);
  });

  it('the recorder port never throws when Redis refuses: it counts the failure', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on('error', () => {});
    let failures = 0;
    const recorder = createEventRecorder(
      down,
      keys,
      {
        enabled: true,
        maxAgeMs: 1000,
        maxCount: 10,
        redact: { texts: false, phones: false, emails: false, cards: false, nationalIds: false },
      },
      pino({ level: 'silent' }),
      () => {
        failures += 1;
      },
    );
    expect(() =>
      recorder.record({
        event: makeEvent(),
        facts: FACTS,
        now: new Date(),
        plan: { matched: [], actions: [] },
        blocked: [],
      }),
    ).not.toThrow();
    await waitFor(() => failures === 1, { timeoutMs: 5_000, what: 'the failure to be counted' });
    down.disconnect();
  });
});
