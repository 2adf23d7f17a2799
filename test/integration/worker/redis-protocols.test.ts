import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { createCallBudget } from '../../../src/worker/call-budget.js';
import { enterOrderGate, leaveOrderGate } from '../../../src/worker/order-gate.js';
import { claimTimer } from '../../../src/worker/timers.js';
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

  const gateKeys = () => {
    const keys = bridgeKeys(prefix);
    return {
      order: keys.order('c1'),
      ghostPrefix: keys.ghostPrefix('c1'),
      jobKeyPrefix: `${prefix}:events:`,
      failedSet: `${prefix}:events:failed`,
    };
  };

  describe('order gate', () => {
    it('lets only the head run, then the next one after the head leaves', async () => {
      const k = gateKeys();
      await redis.zadd(k.order, 1, 'a', 2, 'b');
      await redis.hset(`${prefix}:events:a`, 'name', 'x');
      expect(await enterOrderGate(redis, k, 'b', Date.now(), 10_000)).toEqual({
        kind: 'wait',
        blockedBy: 'a',
      });
      expect(await enterOrderGate(redis, k, 'a', Date.now(), 10_000)).toEqual({ kind: 'go', released: null });
      expect(await leaveOrderGate(redis, k.order, `${prefix}:events:delayed`, 'a')).toEqual({
        next: 'b',
        parked: false,
      });
      expect(await enterOrderGate(redis, k, 'b', Date.now(), 10_000)).toEqual({ kind: 'go', released: null });
      expect(await leaveOrderGate(redis, k.order, `${prefix}:events:delayed`, 'b')).toBeNull();
    });

    it('reports the next head as parked when it waits in the delayed set', async () => {
      const k = gateKeys();
      await redis.zadd(k.order, 1, 'a', 2, 'b');
      await redis.zadd(`${prefix}:events:delayed`, Date.now() + 5_000, 'b');
      expect(await leaveOrderGate(redis, k.order, `${prefix}:events:delayed`, 'a')).toEqual({
        next: 'b',
        parked: true,
      });
    });

    it('lets a job that is not in the order set run (a re-run or a replay)', async () => {
      const k = gateKeys();
      await redis.zadd(k.order, 1, 'a');
      await redis.hset(`${prefix}:events:a`, 'name', 'x');
      expect((await enterOrderGate(redis, k, 'replayed', Date.now(), 10_000)).kind).toBe('go');
    });

    it('drops a head whose job vanished, but only after the grace period', async () => {
      const k = gateKeys();
      await redis.zadd(k.order, 1, 'ghost', 2, 'b');
      const t = Date.now();
      expect((await enterOrderGate(redis, k, 'b', t, 5_000)).kind).toBe('wait');
      expect((await enterOrderGate(redis, k, 'b', t + 1_000, 5_000)).kind).toBe('wait');
      expect(await enterOrderGate(redis, k, 'b', t + 6_000, 5_000)).toEqual({
        kind: 'go',
        released: 'ghost',
      });
      expect(await redis.zrange(k.order, 0, -1)).toEqual(['b']);
    });

    it('drops a head that sits in the failed set (stalled too often) after the grace period', async () => {
      const k = gateKeys();
      await redis.zadd(k.order, 1, 'dead', 2, 'b');
      await redis.hset(`${prefix}:events:dead`, 'name', 'x');
      await redis.zadd(k.failedSet, 1, 'dead');
      const t = Date.now();
      expect((await enterOrderGate(redis, k, 'b', t, 1_000)).kind).toBe('wait');
      expect((await enterOrderGate(redis, k, 'b', t + 2_000, 1_000)).kind).toBe('go');
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
      await redis.hset(keys.timers('c1'), 't1', 'p:agent_reply');
      expect(await claimTimer(redis, keys, 'c1', 't1')).toBe('go');
      expect(await redis.hget(keys.timers('c1'), 't1')).toBe('firing');
      expect(await claimTimer(redis, keys, 'c1', 't1')).toBe('go');
      expect(await claimTimer(redis, keys, 'c1', 'never-registered')).toBe('cancelled');
    });
  });
});
