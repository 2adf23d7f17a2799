import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../src/queue/ingest-event.js';
import { bridgeKeys, eventJobId } from '../../../src/queue/redis-keys.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

describe('ingestEvent (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let queue: Queue;

  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const setup = () => {
    prefix = uniqueName('t-ingest');
    queue = new Queue('events', { connection: redis, prefix });
    return { redis, queue, keys: bridgeKeys(prefix), dedupeWindowSeconds: 60, jobOptions: {} };
  };
  afterEach(async () => {
    await queue.close();
    await deleteKeys(redis, prefix);
  });

  it('queues a new event once and reports a sequential redelivery as duplicate', async () => {
    const options = setup();
    const event = makeEvent();
    const first = await ingestEvent(options, event);
    const second = await ingestEvent(options, { ...event, receivedAt: new Date().toISOString() });
    expect(first.outcome).toBe('queued');
    expect(second.outcome).toBe('duplicate');
    expect(second.jobId).toBe(first.jobId);
    expect(await queue.getWaitingCount()).toBe(1);
  });

  it('creates exactly one job when 20 copies arrive concurrently', async () => {
    const options = setup();
    const event = makeEvent();
    const results = await Promise.all(Array.from({ length: 20 }, () => ingestEvent(options, event)));
    expect(results.filter((r) => r.outcome === 'queued')).toHaveLength(1);
    expect(await queue.getWaitingCount()).toBe(1);
    expect(await redis.zcard(options.keys.order('conv-1'))).toBe(1);
  });

  it('still recognises a redelivery after the first job completed and was removed', async () => {
    const options = setup();
    const event = makeEvent();
    await ingestEvent(options, event);
    await queue.remove(eventJobId(event.key));
    expect(await queue.getWaitingCount()).toBe(0);
    const again = await ingestEvent(options, event);
    expect(again.outcome).toBe('duplicate');
    expect(await queue.getWaitingCount()).toBe(0);
  });

  it('re-adds the job when a crash left the event reserved but not confirmed', async () => {
    const options = setup();
    const event = makeEvent();
    // Simulate a receiver that died after the reservation and before the job was added.
    await redis.set(options.keys.dedupe(event.key), 'r:7', 'EX', 60);
    const result = await ingestEvent(options, event);
    expect(result.arrival).toBe(7);
    expect(await queue.getWaitingCount()).toBe(1);
    expect(await redis.get(options.keys.dedupe(event.key))).toBe('q:7');
  });

  it('numbers arrivals in order and keeps each conversation order set apart', async () => {
    const options = setup();
    const a1 = await ingestEvent(options, makeEvent({ conversationId: 'A' }));
    const b1 = await ingestEvent(options, makeEvent({ conversationId: 'B' }));
    const a2 = await ingestEvent(options, makeEvent({ conversationId: 'A' }));
    expect([a1.arrival, b1.arrival, a2.arrival]).toEqual([1, 2, 3]);
    expect(await redis.zrange(options.keys.order('A'), 0, -1)).toEqual([a1.jobId, a2.jobId]);
    expect(await redis.zrange(options.keys.order('B'), 0, -1)).toEqual([b1.jobId]);
  });
});
