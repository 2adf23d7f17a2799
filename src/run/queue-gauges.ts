import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import type { BridgeKeys } from '../queue/redis-keys.js';

/** Queue depths and dead letters, read from Redis when Prometheus scrapes (never cached stale). */
export function registerQueueGauges(
  registry: Registry,
  queues: Queue[],
  redis: Redis,
  keys: BridgeKeys,
): void {
  new Gauge({
    name: 'convo_bridge_queue_jobs',
    help: 'Jobs in each queue by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      for (const queue of queues) {
        const counts = await queue.getJobCounts(
          'waiting',
          'active',
          'delayed',
          'failed',
          'completed',
          'prioritized',
        );
        for (const [state, count] of Object.entries(counts)) this.set({ queue: queue.name, state }, count);
      }
    },
  });
  new Gauge({
    name: 'convo_bridge_dead_letters',
    help: 'Entries in the dead-letter set (convo-bridge dlq list).',
    registers: [registry],
    async collect() {
      this.set(await redis.zcard(keys.deadIndex));
    },
  });
  new Gauge({
    name: 'convo_bridge_quarantined',
    help: 'Webhook bodies in the quarantine (convo-bridge quarantine list).',
    registers: [registry],
    async collect() {
      this.set(await redis.zcard(keys.quarantine));
    },
  });
}
