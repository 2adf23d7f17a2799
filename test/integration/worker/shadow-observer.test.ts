import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { forgetShadowDifferences } from '../../../src/privacy/global-stores.js';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { type RedisServerHandle, startRedisServer } from '../../../src/redis/start-redis-server.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import { createShadowObserver, type ShadowCandidate } from '../../../src/worker/shadow/shadow-observer.js';
import {
  hourOf,
  readShadowCounts,
  readShadowExamples,
  readShadowTotals,
  resetShadow,
} from '../../../src/worker/shadow/shadow-store.js';
import { makeEvent } from '../../support/make-event.js';

// Issue 28, the cost and the bounds of shadow rules on a Redis of the test's own (so that its
// command statistics are the observer's alone): an event whose plans agree sends no command; an
// event whose plans differ sends one; the kept differences are bounded per rule.

const HEAD = `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund, kecewa ] } }
    then: [ { need_human: true }, { note: "escalated for {{customer.name}}" } ]
  - name: greet
    on: message_in
    if: { text: { any_keywords: [ halo ] } }
    then: [ { note: hi } ]
`;
const active = parseConfigText(HEAD, { fileName: 'a.yaml', env: {} }).rules;
const stricter = parseConfigText(HEAD.replace('[ refund, kecewa ]', '[ kecewa ]'), {
  fileName: 'c.yaml',
  env: {},
}).rules;
const FACTS = { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };
const NOW = new Date('2026-11-23T03:00:00.000Z');

/** Redis's count of calls per command (INFO commandstats). */
async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const info = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(match[1] as string, Number(match[2]));
  }
  return calls;
}

describe('shadow rules observer (real Redis)', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  let admin: Redis;
  const keys = bridgeKeys('t-shadow');
  const candidate = (rules = stricter, examples = 3): ShadowCandidate => ({
    rules: rulesPort(rules),
    examples,
    maxAgeMs: 86_400_000,
  });
  const observe = (
    observer: ReturnType<typeof createShadowObserver>,
    text: string,
    conversationId = 'c-1',
  ) => {
    const event = makeEvent({ text, conversationId, occurredAt: NOW.toISOString(), senderName: 'Budi' });
    observer.observe({ event, facts: FACTS, now: NOW, plan: evaluateRules(active, event, FACTS, NOW) });
    return event;
  };

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { enableAutoPipelining: true });
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await admin?.quit();
    await server?.stop();
  });
  beforeEach(async () => {
    await admin.flushall();
    await admin.config('RESETSTAT');
  });

  it('sends no command for events whose plans agree, one per event whose plans differ, the counts once per flush', async () => {
    const observer = createShadowObserver({
      redis,
      keys,
      candidate: () => candidate(),
      log: pino({ level: 'silent' }),
      flushEveryMs: 60_000,
    });
    // Warm-up: Redis learns both scripts (a first EVALSHA finds none and falls back to EVAL).
    observe(observer, 'mau refund');
    await observer.flush();
    await waitFor(async () => (await redis.hget(keys.shadowTotals, 'escalate')) === '1', {
      timeoutMs: 5_000,
      what: 'the warm-up difference',
    });
    await admin.config('RESETSTAT');

    for (let i = 0; i < 200; i++) observe(observer, i % 2 === 0 ? 'halo kak' : 'saya kecewa');
    // Anything sent would have arrived by then (auto-pipelining sends on the next tick).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const agreeing = await commandCalls(admin);
    expect([...agreeing.keys()].filter((name) => name !== 'config|resetstat' && name !== 'info')).toEqual([]);

    for (let i = 0; i < 5; i++) observe(observer, 'mau refund');
    await waitFor(async () => (await admin.hget(keys.shadowTotals, 'escalate')) === '6', {
      timeoutMs: 5_000,
      what: 'the five differences',
    });
    const differing = await commandCalls(admin);
    // One script call each; what the script does (HINCRBY, HSET, EXPIRE) is not a command sent.
    expect(differing.get('evalsha')).toBe(5);
    expect(differing.get('eval')).toBeUndefined();

    await observer.flush();
    const after = await commandCalls(admin);
    expect((after.get('evalsha') ?? 0) - 5).toBe(1);
    const counts = await readShadowCounts(redis, keys, NOW.getTime(), NOW.getTime());
    expect(Object.fromEntries(counts)).toEqual({
      e: 206,
      x: 6,
      'a|greet': 100,
      'c|greet': 100,
      'm|greet': 100,
      'a|escalate': 106,
      'c|escalate': 100,
      'm|escalate': 106,
      'd|escalate': 6,
    });
    expect(await redis.ttl(keys.shadowCounts(hourOf(NOW.getTime())))).toBeGreaterThan(86_400);
  });

  it('keeps the newest differences per rule, counts them all, and reset removes everything', async () => {
    const observer = createShadowObserver({
      redis,
      keys,
      candidate: () => candidate(stricter, 3),
      log: pino({ level: 'silent' }),
      flushEveryMs: 60_000,
    });
    const events = Array.from({ length: 10 }, (_, i) => observe(observer, 'refund', `c-${i}`));
    await waitFor(async () => (await redis.hget(keys.shadowTotals, 'escalate')) === '10', {
      timeoutMs: 5_000,
      what: 'ten differences',
    });
    expect(await redis.hlen(keys.shadowExamples)).toBe(3);
    const kept = await readShadowExamples(redis, keys);
    expect(kept.problems).toEqual([]);
    expect(kept.examples.map((e) => e.conversationId).sort()).toEqual(['c-7', 'c-8', 'c-9']);
    expect(kept.examples.find((e) => e.conversationId === 'c-9')).toMatchObject({
      rule: 'escalate',
      eventKey: events[9]?.key,
      kind: 'message_in',
      active: { matched: true, actions: ['need_human', 'note "escalated for Budi"'] },
      candidate: { matched: false, actions: [] },
    });
    expect(Object.fromEntries(await readShadowTotals(redis, keys))).toEqual({ escalate: 10 });
    expect(await redis.ttl(keys.shadowExamples)).toBeGreaterThan(86_000);

    // forget: one conversation's differences go, the others stay.
    expect(await forgetShadowDifferences(redis, keys, { conversationId: 'c-8', tag: '' }, true)).toBe(1);
    expect(await forgetShadowDifferences(redis, keys, { conversationId: 'c-8', tag: '' }, false)).toBe(1);
    expect((await readShadowExamples(redis, keys)).examples.map((e) => e.conversationId).sort()).toEqual([
      'c-7',
      'c-9',
    ]);

    await observer.flush();
    expect(await resetShadow(redis, keys)).toBe(3);
    expect(await admin.dbsize()).toBe(0);
  });

  it('does nothing while off, and a candidate that throws leaves the event alone', async () => {
    let current: ShadowCandidate | undefined;
    const observer = createShadowObserver({
      redis,
      keys,
      candidate: () => current,
      log: pino({ level: 'silent' }),
      flushEveryMs: 60_000,
    });
    expect(observer.enabled()).toBe(false);
    observe(observer, 'refund');
    current = {
      ...candidate(),
      rules: {
        ...rulesPort(stricter),
        evaluate: () => {
          throw new Error('a bug in the candidate');
        },
      },
    };
    expect(observer.enabled()).toBe(true);
    expect(() => observe(observer, 'refund')).not.toThrow();
    await observer.flush();
    expect(await admin.dbsize()).toBe(0);
  });
});
