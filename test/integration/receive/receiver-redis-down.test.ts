import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import { findFreePort, type RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { webhookFixture } from '../../fixtures/webhooks/index.js';
import { startRedisServer, uniqueName } from '../../support/redis.js';
import { postWebhook } from './webhook-client.js';

const SECRET = 'whsec-down-4c1d9e';
const AUTH = { 'content-type': 'application/json', authorization: SECRET };
const UNAVAILABLE = {
  success: false,
  error: 'the event could not be stored right now (Redis unavailable); it was not accepted, retry later',
};

/** A message event with its own id, so each delivery is a new event. */
const message = (id: string) => {
  const body = JSON.parse(webhookFixture('channel-message-in').raw) as { message: Record<string, unknown> };
  return JSON.stringify({ ...body, message: { ...body.message, id } });
};

// This suite stops and pauses Redis, so it runs its own redis-server, never the shared one.
describe('receiver when Redis is down (own redis-server)', () => {
  let server: RedisServerHandle;
  let receiver: Receiver;
  let url: string;
  let base: string;
  const prefix = uniqueName('t-down');

  beforeAll(async () => {
    // Append-only, as in production: an acknowledged event must survive Redis being killed.
    server = await startRedisServer({ appendOnly: true });
    receiver = createReceiver({ secrets: [SECRET], redisUrl: server.url, prefix, enqueueTimeoutMs: 2000 });
    base = (await receiver.listen()).url;
    url = `${base}/webhooks/platform`;
  });
  afterAll(async () => {
    await receiver.close();
    await server.stop();
  });

  it('answers 503 within 3 s while Redis is stopped, and 200 again once it is back', async () => {
    expect((await postWebhook(url, message('before-kill'), AUTH)).outcome).toBe('queued');

    await server.kill();
    const down = await postWebhook(url, message('while-down'), AUTH);
    expect(down).toMatchObject({ status: 503, json: UNAVAILABLE, outcome: 'unavailable' });
    expect(down.elapsedMs).toBeLessThan(3000);
    // A body for the quarantine cannot be kept either: 503 too, so the platform retries it.
    const unknown = await postWebhook(url, webhookFixture('unknown-event').raw, AUTH);
    expect(unknown).toMatchObject({ status: 503, json: UNAVAILABLE, outcome: 'unavailable' });
    expect(unknown.elapsedMs).toBeLessThan(3000);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(receiver.isReady()).toBe(false);
    // Liveness is about the process, not Redis: a restart would not help.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    await server.restart();
    const back = await waitFor(
      async () => {
        const answer = await postWebhook(url, message('while-down'), AUTH);
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the receiver to answer 200 after Redis restarted' },
    );
    // The retried event is stored now: the 503 had stored nothing.
    expect(back.outcome).toBe('queued');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    const check = new Redis(server.url);
    const queue = new Queue('events', { connection: check, prefix });
    try {
      // The event acknowledged before the kill survived it (AOF), and the retried one is there once.
      const ids = (await queue.getJobs(['waiting'])).flatMap((j) =>
        (j.data as { events: { event: { messageId: string } }[] }).events.map((e) => e.event.messageId),
      );
      expect(ids.sort()).toEqual(['before-kill', 'while-down']);
    } finally {
      await queue.close();
      await check.quit();
    }
  });

  it('answers 503 within the enqueue timeout when Redis hangs (SIGSTOP)', async () => {
    const probe = new Redis(server.url);
    const info = await probe.info('server');
    await probe.quit();
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGSTOP');
    try {
      const answer = await postWebhook(url, message('while-hung'), AUTH);
      expect(answer).toMatchObject({ status: 503, json: UNAVAILABLE });
      expect(answer.elapsedMs).toBeLessThan(3000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const back = await waitFor(
      async () => {
        const again = await postWebhook(url, message('while-hung'), AUTH);
        return again.status === 200 ? again : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the receiver to answer 200 after Redis resumed' },
    );
    // Either the hung attempt completed late (then this is its duplicate) or this one stored it.
    expect(['queued', 'duplicate']).toContain(back.outcome);
  });
});

describe('receiver started before Redis', () => {
  let server: RedisServerHandle | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    await receiver?.close();
    await server?.stop();
  });

  it('answers 503 until Redis comes up, then stores events', async () => {
    const port = await findFreePort();
    receiver = createReceiver({
      secrets: [SECRET],
      redisUrl: `redis://127.0.0.1:${port}`,
      prefix: uniqueName('t-late'),
      enqueueTimeoutMs: 1000,
    });
    const { url: base } = await receiver.listen();
    const url = `${base}/webhooks/platform`;
    const early = await postWebhook(url, message('early'), AUTH);
    expect(early).toMatchObject({ status: 503, json: UNAVAILABLE });
    expect(early.elapsedMs).toBeLessThan(3000);

    server = await startRedisServer({ port });
    const stored = await waitFor(
      async () => {
        const answer = await postWebhook(url, message('early'), AUTH);
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the receiver to store events once Redis is up' },
    );
    expect(stored.outcome).toBe('queued');
  });
});
