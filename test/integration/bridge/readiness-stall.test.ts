import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createReadiness } from '../../../src/bridge/readiness.js';
import { createOutageReporter } from '../../../src/bridge/redis-outage.js';
import { connectTestRedis, deleteKeys, uniqueName } from '../../support/redis.js';

/**
 * `/readyz` tells a stalled worker (jobs waiting, none finished for the stall window) by the jobs
 * its own workers finished: done jobs are removed as they complete (issue 27,
 * `retention.done_events: 0s`), so BullMQ's completed set no longer counts them. A real queue
 * with a waiting job; the worker is the count it reports.
 */
describe('readiness: a stalled worker is told by the jobs it finished (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let queue: Queue;
  beforeAll(async () => {
    redis = connectTestRedis();
    prefix = uniqueName('t-ready');
    queue = new Queue('events', { connection: redis, prefix });
    await queue.add('batch', { events: [] });
  });
  afterAll(async () => {
    await queue.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  function readinessWith(finished: { count: number }) {
    return createReadiness({
      state: { shuttingDown: false, exitCode: 0 },
      outage: createOutageReporter({ address: 'test', intervalMs: 30_000 }),
      redis,
      address: 'test',
      worker: { isRunning: () => true, finishedJobs: () => finished.count },
      eventQueues: [queue],
      stallWindowMs: 300,
    });
  }

  it('is not ready once nothing finished for the stall window while a job waits', async () => {
    const readiness = readinessWith({ count: 0 });
    expect(await readiness()).toBeNull();
    await waitFor(async () => (await readiness()) !== null, { timeoutMs: 3_000, what: 'the stall' });
    expect(await readiness()).toMatch(/^no job finished for \d+ s while 1 are waiting$/);
  });

  it('stays ready while its workers keep finishing jobs (none of them kept in Redis)', async () => {
    const finished = { count: 0 };
    const readiness = readinessWith(finished);
    const started = Date.now();
    while (Date.now() - started < 1_200) {
      finished.count += 1;
      expect(await readiness()).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await queue.getCompletedCount()).toBe(0);
  });
});
