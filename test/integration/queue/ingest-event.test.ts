import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { ingestBatch, ingestEvent } from '../../../src/queue/ingest-event.js';
import {
  bridgeKeys,
  dedupeMarker,
  eventId,
  orderMember,
  parseDedupeMarker,
} from '../../../src/queue/redis-keys.js';
import { createGroupCommit } from '../../../src/receive/group-commit.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

describe('ingestEvent / ingestBatch (real Redis)', () => {
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
  const queuedEvents = async () =>
    (await queue.getJobs(['waiting'])).flatMap((job) => EventBatchDataSchema.parse(job.data).events);

  it('queues a new event once and reports a sequential redelivery as duplicate', async () => {
    const options = setup();
    const event = makeEvent();
    const first = await ingestEvent(options, event);
    const second = await ingestEvent(options, { ...event, receivedAt: new Date().toISOString() });
    expect(first.outcome).toBe('queued');
    expect(second).toMatchObject({ outcome: 'duplicate', arrival: first.arrival });
    expect(await queue.getWaitingCount()).toBe(1);
  });

  it('stores a batch as ONE job, in arrival order, and a copy inside the batch once', async () => {
    const options = setup();
    const a = makeEvent({ conversationId: 'A' });
    const b = makeEvent({ conversationId: 'B' });
    const results = await ingestBatch(options, [a, b, a]);
    expect(results.map((r) => r.outcome)).toEqual(['queued', 'queued', 'duplicate']);
    expect(await queue.getWaitingCount()).toBe(1);
    expect((await queuedEvents()).map((e) => [e.arrival, e.event.key])).toEqual([
      [1, a.key],
      [2, b.key],
    ]);
    const jobId = results[0]?.jobId ?? '';
    expect(await redis.zrange(options.keys.order('A'), 0, -1)).toEqual([orderMember(jobId, a.key)]);
    expect(await redis.get(options.keys.dedupe(a.key))).toBe(dedupeMarker(1, jobId, 'A'));
  });

  it('creates exactly one job when 20 copies arrive concurrently through the group commit', async () => {
    const options = setup();
    const ingest = createGroupCommit((events) => ingestBatch(options, events));
    const event = makeEvent();
    const results = await Promise.all(Array.from({ length: 20 }, () => ingest(event)));
    expect(results.filter((r) => r.outcome === 'queued')).toHaveLength(1);
    expect(await queuedEvents()).toHaveLength(1);
    expect(await redis.zcard(options.keys.order('conv-1'))).toBe(1);
  });

  it('copies racing from separate receivers leave the event owned by exactly one job', async () => {
    const options = setup();
    const event = makeEvent();
    await Promise.all(Array.from({ length: 10 }, () => ingestEvent(options, event)));
    const members = await redis.zrange(options.keys.order('conv-1'), 0, -1);
    expect(members).toHaveLength(1);
    const marker = (await redis.get(options.keys.dedupe(event.key))) ?? '';
    expect(members[0]).toBe(orderMember(parseDedupeMarker(marker).jobId, event.key));
  });

  it('still recognises a redelivery after the event was processed and its job removed', async () => {
    const options = setup();
    const event = makeEvent();
    const first = await ingestEvent(options, event);
    // What a worker leaves behind: the event out of its order set, the job completed and removed.
    await redis.zrem(options.keys.order('conv-1'), orderMember(first.jobId, event.key));
    await queue.remove(first.jobId);
    const again = await ingestEvent(options, event);
    expect(again.outcome).toBe('duplicate');
    expect(await queue.getWaitingCount()).toBe(0);
  });

  it('takes over an event whose job never reached the queue (the receiver died after reserving)', async () => {
    const options = setup();
    const event = makeEvent();
    // A receiver that died after the reservation and before the job was added.
    await redis.set(options.keys.dedupe(event.key), '7|b-lost', 'EX', 60);
    await redis.zadd(options.keys.order('conv-1'), 7, `b-lost|${eventId(event.key)}`);
    const result = await ingestEvent(options, event);
    expect(result).toMatchObject({ outcome: 'queued', arrival: 7 });
    expect(await queuedEvents()).toHaveLength(1);
    expect(await redis.zrange(options.keys.order('conv-1'), 0, -1, 'WITHSCORES')).toEqual([
      orderMember(result.jobId, event.key),
      '7',
    ]);
    expect(await redis.get(options.keys.dedupe(event.key))).toBe(dedupeMarker(7, result.jobId, 'conv-1'));
  });

  it('numbers arrivals in order and keeps each conversation order set apart', async () => {
    const options = setup();
    const a1 = await ingestEvent(options, makeEvent({ conversationId: 'A' }));
    const b1 = await ingestEvent(options, makeEvent({ conversationId: 'B' }));
    const a2 = await ingestEvent(options, makeEvent({ conversationId: 'A' }));
    expect([a1.arrival, b1.arrival, a2.arrival]).toEqual([1, 2, 3]);
    expect(await redis.zcard(options.keys.order('A'))).toBe(2);
    expect(await redis.zcard(options.keys.order('B'))).toBe(1);
  });
});
