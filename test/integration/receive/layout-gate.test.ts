import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventProducer, DEFAULT_EVENT_JOB_OPTIONS } from '../../../src/receive/event-producer.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

// Events are stored only once the Redis is known to hold the configured key layout (issue 14);
// until then a webhook waits at most the command timeout and is refused, never stored late.
describe('the receiver before its key layout is checked', () => {
  const prefix = uniqueName('t-gate');
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    const redis = connectTestRedis();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  const producer = (layoutChecked: Promise<void>) => {
    const p = createEventProducer({
      redisUrl: testRedisUrl(),
      prefix,
      dedupeWindowSeconds: 600,
      jobOptions: DEFAULT_EVENT_JOB_OPTIONS,
      commandTimeoutMs: 300,
      logger: pino({ level: 'silent' }),
      layoutChecked,
    });
    closers.push(() => p.close());
    return p;
  };

  it('refuses within the command timeout while the check has not passed, and stores nothing later', async () => {
    let pass: () => void = () => {};
    const p = producer(new Promise<void>((resolve) => (pass = resolve)));
    await p.connected(5_000);
    const event = makeEvent({ conversationId: 'gate-1' });
    const started = Date.now();
    await expect(p.ingest(event)).rejects.toMatchObject({ code: 'RECEIVER_REDIS_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(1_500);
    pass();
    // The refused event is not stored once the check passes; the next one is.
    const next = await p.ingest(makeEvent({ conversationId: 'gate-1' }));
    expect(next.outcome).toBe('queued');
    expect((await p.queue().getJobs(['waiting'])).flatMap((j) => j.data.events)).toHaveLength(1);
  });

  it('an event that arrives while the check is under way is stored once it passes', async () => {
    let pass: () => void = () => {};
    const p = producer(new Promise<void>((resolve) => (pass = resolve)));
    await p.connected(5_000);
    const pending = p.ingest(makeEvent({ conversationId: 'gate-2' }));
    setTimeout(() => pass(), 50);
    await expect(pending).resolves.toMatchObject({ outcome: 'queued' });
  });
});
