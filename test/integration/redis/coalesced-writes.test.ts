import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoalescedWrites, coalescedWrites } from '../../../src/redis/coalesced-writes.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

describe('coalesced writes (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach((context) => {
    prefix = uniqueName('t-coalesce');
    context.onTestFinished(() => deleteKeys(redis, prefix));
  });

  it('sends the writes of one turn as one pipeline and gives each caller its own replies', async () => {
    const writes = new CoalescedWrites(redis);
    const pipelines = vi.spyOn(redis, 'pipeline');
    const a = writes.exec(`${prefix}:a`, (p) => {
      p.hset(`${prefix}:a`, { x: '1', y: '2' });
      p.expire(`${prefix}:a`, 60);
      return 2;
    });
    const b = writes.exec(`${prefix}:b`, (p) => {
      p.hset(`${prefix}:b`, { z: '3' });
      return 1;
    });
    const c = writes.exec(`${prefix}:c`, (p) => {
      p.incrby(`${prefix}:c`, 7);
      return 1;
    });
    expect(await Promise.all([a, b, c])).toEqual([
      [
        [null, 2],
        [null, 1],
      ],
      [[null, 1]],
      [[null, 7]],
    ]);
    expect(pipelines).toHaveBeenCalledTimes(1);
    pipelines.mockRestore();
    expect(await redis.hgetall(`${prefix}:a`)).toEqual({ x: '1', y: '2' });
    expect(await redis.ttl(`${prefix}:a`)).toBeGreaterThan(0);
  });

  it('starts a new pipeline for writes queued after the batch went out', async () => {
    const writes = new CoalescedWrites(redis);
    const pipelines = vi.spyOn(redis, 'pipeline');
    const first = await writes.exec(`${prefix}:n`, (p) => {
      p.incr(`${prefix}:n`);
      return 1;
    });
    const second = await writes.exec(`${prefix}:n`, (p) => {
      p.incr(`${prefix}:n`);
      return 1;
    });
    expect([first, second]).toEqual([[[null, 1]], [[null, 2]]]);
    expect(pipelines).toHaveBeenCalledTimes(2);
    pipelines.mockRestore();
  });

  it("fails only the caller whose command failed; its neighbours' writes land", async () => {
    await redis.set(`${prefix}:string`, 'not a hash');
    const writes = new CoalescedWrites(redis);
    const bad = writes.exec(`${prefix}:string`, (p) => {
      p.hset(`${prefix}:string`, { f: 'v' });
      return 1;
    });
    const good = writes.exec(`${prefix}:good`, (p) => {
      p.hset(`${prefix}:good`, { f: 'v' });
      return 1;
    });
    const [badResults, goodResults] = await Promise.all([bad, good]);
    expect(badResults).toHaveLength(1);
    expect(String(badResults[0]?.[0])).toMatch(/WRONGTYPE/);
    expect(goodResults).toEqual([[null, 1]]);
    expect(await redis.hget(`${prefix}:good`, 'f')).toBe('v');
  });

  it('gives every caller of a batch an error when Redis cannot be reached', async () => {
    const port = await findFreePort();
    const offline = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      const writes = new CoalescedWrites(offline);
      const one = writes.exec('k1', (p) => {
        p.set('k1', 'v');
        return 1;
      });
      const two = writes.exec('k2', (p) => {
        p.set('k2', 'v');
        return 1;
      });
      const results = await Promise.all([one, two]);
      expect(results.map((r) => r.length)).toEqual([1, 1]);
      for (const result of results) expect(result[0]?.[0]).toBeInstanceOf(Error);
    } finally {
      offline.disconnect();
    }
  });

  it('keeps one coalescer per connection', () => {
    expect(coalescedWrites(redis)).toBe(coalescedWrites(redis));
  });
});
