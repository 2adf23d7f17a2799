import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { createCallBudget } from '../../../src/worker/failures/call-budget.js';
import { checkOrderGate, leaveOrderGate } from '../../../src/worker/processor/order-gate.js';
import { claimTimer } from '../../../src/worker/timers/timers.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

describe('worker Redis protocols (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async (context) => {
    prefix = uniqueName('t-proto');
    context.onTestFinished(() => deleteKeys(redis, prefix));
  });

  const gate = (jobId: string, member: string, now = Date.now(), ghostGraceMs = 10_000) =>
    checkOrderGate(redis, {
      jobKeyPrefix: `${prefix}:events:`,
      failedSet: `${prefix}:events:failed`,
      dedupePrefix: bridgeKeys(prefix).dedupePrefix,
      now,
      ghostGraceMs,
      jobId,
      events: [{ orderKey: bridgeKeys(prefix).order('c1'), member }],
    }).then(([kind]) => kind);
  const leave = (member: string, set: Record<string, string> = {}, remove: string[] = []) => {
    const keys = bridgeKeys(prefix);
    return leaveOrderGate(redis, {
      orderKey: keys.order('c1'),
      conversationKey: keys.conversation('c1'),
      runKey: keys.run('e1'),
      delayedSet: `${prefix}:events:delayed`,
      member,
      keepRunSeconds: 0,
      conversationTtlSeconds: 60,
      set,
      remove,
    });
  };
  const order = () => bridgeKeys(prefix).order('c1');

  describe('order gate', () => {
    it('lets only the head run, then the next one after the head leaves', async () => {
      await redis.zadd(order(), 1, 'A|a', 2, 'B|b');
      await redis.hset(`${prefix}:events:A`, 'name', 'x');
      await redis.hset(`${prefix}:events:B`, 'name', 'x');
      expect(await gate('B', 'B|b')).toBe('wait');
      expect(await gate('A', 'A|a')).toBe('go');
      expect(await leave('A|a')).toEqual({ next: 'B|b', parked: false });
      expect(await gate('B', 'B|b')).toBe('go');
      expect(await leave('B|b')).toBeNull();
    });

    it('chains an event behind an earlier event of its own batch job', async () => {
      await redis.zadd(order(), 1, 'A|a1', 2, 'A|a2');
      await redis.hset(`${prefix}:events:A`, 'name', 'x');
      expect(await gate('A', 'A|a2')).toBe('chain');
      expect(await gate('A', 'A|a1')).toBe('go');
    });

    it('reports the next head as parked when its job waits in the delayed set', async () => {
      await redis.zadd(order(), 1, 'A|a', 2, 'B|b');
      await redis.zadd(`${prefix}:events:delayed`, Date.now() + 5_000, 'B');
      expect(await leave('A|a')).toEqual({ next: 'B|b', parked: true });
    });

    it('skips an event that is not in the order set (done, or taken over by a redelivery)', async () => {
      await redis.zadd(order(), 1, 'A|a');
      await redis.hset(`${prefix}:events:A`, 'name', 'x');
      expect(await gate('OLD', 'OLD|a')).toBe('skip');
      expect(await gate('A', 'A|done')).toBe('skip');
    });

    it('drops a head whose job vanished after the grace period, and its dedupe marker', async () => {
      const keys = bridgeKeys(prefix);
      await redis.zadd(order(), 1, 'GHOST|g', 2, 'B|b');
      await redis.hset(`${prefix}:events:B`, 'name', 'x');
      await redis.set(`${keys.dedupePrefix}g`, '1|GHOST');
      const t = Date.now();
      expect(await gate('B', 'B|b', t, 5_000)).toBe('wait');
      expect(await gate('B', 'B|b', t + 1_000, 5_000)).toBe('wait');
      expect(await gate('B', 'B|b', t + 6_000, 5_000)).toBe('go');
      expect(await redis.zrange(order(), 0, -1)).toEqual(['B|b']);
      // A redelivery of the dropped event is taken as new.
      expect(await redis.exists(`${keys.dedupePrefix}g`)).toBe(0);
    });

    it('drops a head that sits in the failed set (stalled too often) after the grace period', async () => {
      await redis.zadd(order(), 1, 'DEAD|d', 2, 'B|b');
      await redis.hset(`${prefix}:events:DEAD`, 'name', 'x');
      await redis.zadd(`${prefix}:events:failed`, 1, 'DEAD');
      const t = Date.now();
      expect(await gate('B', 'B|b', t, 1_000)).toBe('wait');
      expect(await gate('B', 'B|b', t + 2_000, 1_000)).toBe('go');
    });

    it('leaving writes what the run learnt into the conversation hash and deletes its state', async () => {
      const keys = bridgeKeys(prefix);
      await redis.zadd(order(), 1, 'A|a');
      await redis.hset(keys.conversation('c1'), 'R:old', '1', 'lastIn', '2026-01-01T00:00:00.000Z');
      await redis.hset(keys.run('e1'), 'plan', '{}');
      expect(await leave('A|a', { 'O:greet': '2026-01-02T00:00:00.000Z' }, ['R:old'])).toBeNull();
      expect(await redis.hgetall(keys.conversation('c1'))).toEqual({
        lastIn: '2026-01-01T00:00:00.000Z',
        'O:greet': '2026-01-02T00:00:00.000Z',
      });
      expect(await redis.ttl(keys.conversation('c1'))).toBeGreaterThan(0);
      expect(await redis.exists(keys.run('e1'))).toBe(0);
    });
  });

  describe('call budget (GCRA)', () => {
    it('spaces calls evenly at max per period, across callers', async () => {
      // 10 calls per 200 ms -> one slot every 20 ms. Five callers asking at the same instant get
      // slots 0, 20, 40, 60 and 80 ms later.
      const now = 1_000_000;
      const budget = () =>
        createCallBudget({ redis, key: `${prefix}:rate`, max: 10, perMs: 200, now: () => now });
      const started = performance.now();
      const finished = await Promise.all(
        Array.from({ length: 5 }, async () => {
          await budget().take();
          return performance.now() - started;
        }),
      );
      finished.sort((x, y) => x - y);
      finished.forEach((elapsed, slot) => {
        expect(elapsed).toBeGreaterThanOrEqual(slot * 20 - 2);
      });
      expect(finished[4]).toBeLessThan(1_000);
    });

    it('refuses instead of waiting longer than maxWait', async () => {
      const now = 5_000_000;
      const budget = createCallBudget({
        redis,
        key: `${prefix}:rate2`,
        max: 1,
        perMs: 60_000,
        maxWaitMs: 100,
        now: () => now,
      });
      await budget.take();
      await expect(budget.take()).rejects.toMatchObject({ code: 'CALL_BUDGET_EXHAUSTED' });
    });
  });

  describe('timer claim', () => {
    it('claims a pending timer once, lets its re-run continue, and reports cancelled ones', async () => {
      const keys = bridgeKeys(prefix);
      await redis.hset(keys.conversation('c1'), 'T:t1', 'p:agent_reply');
      expect(await claimTimer(redis, keys, 'c1', 't1')).toBe('go');
      expect(await redis.hget(keys.conversation('c1'), 'T:t1')).toBe('firing');
      expect(await claimTimer(redis, keys, 'c1', 't1')).toBe('go');
      expect(await claimTimer(redis, keys, 'c1', 'never-registered')).toBe('cancelled');
    });
  });
});
