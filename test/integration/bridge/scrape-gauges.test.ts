import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { registerQueueGauges } from '../../../src/bridge/queue-gauges.js';
import { registerRedisGauges } from '../../../src/bridge/redis-gauges.js';
import { businessNaming, SINGLE_BUSINESS_NAMING } from '../../../src/events/business-naming.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { findFreePort, type RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import {
  connectTestRedis,
  deleteKeys,
  startRedisServer,
  testRedisUrl,
  uniqueName,
} from '../../support/redis.js';

/**
 * Issue 29: the gauges the alerts of deploy/prometheus/alerts.yml read, on a real Redis, read when
 * Prometheus scrapes. /metrics must answer while Redis does not (else the Redis alert never sees
 * its 0), and a Redis read that fails leaves no sample rather than a made-up value.
 */
async function sample(registry: Registry, name: string, labels: Record<string, string> = {}) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const wanted = Object.entries(labels);
  return metric?.values.find((value) =>
    wanted.every(([key, text]) => (value.labels as Record<string, unknown>)[key] === text),
  )?.value;
}

async function samples(registry: Registry, name: string) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).map((value) => ({ labels: value.labels, value: value.value }));
}

/** The business of a config without `businesses:`. */
const SINGLE = [{ id: 'default', naming: SINGLE_BUSINESS_NAMING }];

describe('the gauges read when Prometheus scrapes', () => {
  let redis: Redis;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    redis = connectTestRedis();
    // The gauges read nothing from a connection that is not ready yet.
    await redis.ping();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function queuesOf(prefix: string, shards: number) {
    const made = Array.from({ length: shards }, (_, index) => ({
      events: new Queue('events', { connection: { url: testRedisUrl() }, prefix: `${prefix}-${index}` }),
      timers: new Queue('timers', { connection: { url: testRedisUrl() }, prefix: `${prefix}-${index}` }),
    }));
    cleanups.push(async () => {
      for (const shard of made) await Promise.all([shard.events.close(), shard.timers.close()]);
      await deleteKeys(redis, prefix);
    });
    return made;
  }

  it('gives the age of the event job next in line, over every shard, and 0 when none waits', async () => {
    const prefix = uniqueName('t-gauge');
    const shards = queuesOf(prefix, 2);
    const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
    const now = Date.now();
    const registry = new Registry();
    registerQueueGauges(registry, {
      shards,
      redis,
      layout,
      businesses: () => SINGLE,
      isDown: () => false,
      now: () => now,
    });
    expect(await sample(registry, 'convo_bridge_oldest_waiting_event_seconds')).toBe(0);
    const [first, second] = shards;
    if (!first || !second) throw new Error('two shards');
    // Shard 0: the job stored 600 s ago is next in line, a newer one behind it.
    await first.events.add('events', {}, { timestamp: now - 600_000 });
    await first.events.add('events', {}, { timestamp: now - 10_000 });
    expect(await sample(registry, 'convo_bridge_oldest_waiting_event_seconds')).toBe(600);
    // Shard 1 has waited longer still; a delayed job (a retry, a paused business) does not count.
    await second.events.add('events', {}, { timestamp: now - 900_000 });
    await second.events.add('events', {}, { timestamp: now - 5_000_000, delay: 60_000 });
    expect(await sample(registry, 'convo_bridge_oldest_waiting_event_seconds')).toBe(900);
    expect(await sample(registry, 'convo_bridge_queue_jobs', { queue: 'events', state: 'waiting' })).toBe(3);
    expect(await sample(registry, 'convo_bridge_queue_jobs', { queue: 'events', state: 'delayed' })).toBe(1);
  });

  it('counts dead letters and the quarantine per business, and drops a business a reload removed', async () => {
    const prefix = uniqueName('t-gauge');
    cleanups.push(() => deleteKeys(redis, prefix));
    const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
    const own = (id: string) => ({ id, naming: businessNaming(id, false) });
    let served = [own('toko-a'), own('toko-b')];
    const registry = new Registry();
    registerQueueGauges(registry, {
      shards: [],
      redis,
      layout,
      businesses: () => served,
      isDown: () => false,
    });
    const dead = (business: string) => layout.forNaming(businessNaming(business, false)).global.deadIndex;
    await redis.zadd(dead('toko-a'), 1, 'x', 2, 'y');
    await redis.zadd(layout.forNaming(businessNaming('toko-b', false)).global.quarantine, 1, 'q');
    // The keys of the one business of a config without `businesses:` are not theirs.
    await redis.zadd(layout.global.deadIndex, 1, 'z');
    expect(await samples(registry, 'convo_bridge_dead_letters')).toEqual([
      { labels: { business: 'toko-a' }, value: 2 },
      { labels: { business: 'toko-b' }, value: 0 },
    ]);
    expect(await sample(registry, 'convo_bridge_quarantined', { business: 'toko-b' })).toBe(1);
    served = [own('toko-b')];
    expect(await samples(registry, 'convo_bridge_dead_letters')).toEqual([
      { labels: { business: 'toko-b' }, value: 0 },
    ]);
    // `serve` has no queues: no queue samples, no made-up age.
    expect(await samples(registry, 'convo_bridge_queue_jobs')).toEqual([]);
    expect(await samples(registry, 'convo_bridge_oldest_waiting_event_seconds')).toEqual([]);

    const single = new Registry();
    registerQueueGauges(single, { shards: [], redis, layout, businesses: () => SINGLE, isDown: () => false });
    // A config without businesses: is a table of one, labelled `default`, reading the keys of old.
    expect(await samples(single, 'convo_bridge_dead_letters')).toEqual([
      { labels: { business: 'default' }, value: 1 },
    ]);
  });

  it('answers within the deadline while Redis does not: redis_up 0 and no sample from Redis', async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const control = new Redis(server.url, { maxRetriesPerRequest: 1 });
    control.on('error', () => {});
    cleanups.push(async () => control.disconnect());
    const blocker = new Redis(server.url);
    cleanups.push(async () => blocker.disconnect());
    const prefix = uniqueName('t-gauge');
    const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
    let down = false;
    const registry = new Registry();
    const deps = { redis: control, isDown: () => down, deadlineMs: 300 };
    registerQueueGauges(registry, { ...deps, shards: [], layout, businesses: () => SINGLE });
    registerRedisGauges(registry, { ...deps, replicasAck: 1 });
    await waitFor(() => control.status === 'ready', { timeoutMs: 5_000, what: 'the control connection' });
    expect(await sample(registry, 'convo_bridge_redis_up')).toBe(1);
    expect(await sample(registry, 'convo_bridge_dead_letters')).toBe(0);

    // A Redis that keeps the connection but answers nothing for 2 s (CLIENT PAUSE: every client).
    await blocker.call('CLIENT', 'PAUSE', '2000', 'ALL');
    const started = Date.now();
    const text = await registry.metrics();
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(text).toContain('convo_bridge_redis_up 0');
    expect(text).not.toMatch(/^convo_bridge_dead_letters /m);
    expect(text).not.toMatch(/^convo_bridge_redis_replicas /m);
    expect(text).toContain('convo_bridge_redis_replicas_wanted 1');

    // The outage reporter says Redis is away: nothing is even asked.
    down = true;
    expect(await sample(registry, 'convo_bridge_redis_up')).toBe(0);
    expect(await samples(registry, 'convo_bridge_dead_letters')).toEqual([]);
  });

  it('a Redis that is not there at all: the scrape answers at once', async () => {
    const port = await findFreePort();
    const control = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    control.on('error', () => {});
    cleanups.push(async () => control.disconnect());
    const registry = new Registry();
    const layout = createKeyLayout({ prefix: uniqueName('t-gauge'), shards: 1, tagged: false });
    registerQueueGauges(registry, {
      shards: [],
      redis: control,
      layout,
      businesses: () => SINGLE,
      isDown: () => false,
    });
    registerRedisGauges(registry, { redis: control, isDown: () => false, replicasAck: 0 });
    const text = await registry.metrics();
    expect(text).toContain('convo_bridge_redis_up 0');
    expect(text).not.toMatch(/^convo_bridge_dead_letters /m);
  });

  describe('replicas against redis.replicas_ack', () => {
    let primary: RedisServerHandle;
    let replica: RedisServerHandle;
    beforeAll(async () => {
      [primary, replica] = await Promise.all([startRedisServer(), startRedisServer()]);
    });
    afterAll(async () => {
      await Promise.all([primary.stop(), replica.stop()]);
    });

    it('counts the online replicas of the primary: 0, then 1 once one has synced', async () => {
      const control = new Redis(primary.url);
      cleanups.push(async () => control.disconnect());
      const registry = new Registry();
      registerRedisGauges(registry, { redis: control, isDown: () => false, replicasAck: 1 });
      await waitFor(() => control.status === 'ready', { timeoutMs: 5_000, what: 'the connection' });
      expect(await sample(registry, 'convo_bridge_redis_replicas')).toBe(0);
      expect(await sample(registry, 'convo_bridge_redis_replicas_wanted')).toBe(1);
      const follower = new Redis(replica.url);
      cleanups.push(async () => follower.disconnect());
      await follower.replicaof('127.0.0.1', primary.port);
      await waitFor(async () => (await sample(registry, 'convo_bridge_redis_replicas')) === 1, {
        timeoutMs: 10_000,
        what: 'the replica to be online',
      });
    });
  });
});
