import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';

/** Queue depths and dead letters, read from RedisClient when Prometheus scrapes (never cached stale). */
export function registerQueueGauges(
  registry: Registry,
  queues: Queue[],
  redis: RedisClient,
  keys: BridgeKeys,
): void {
  new Gauge({
    name: 'convo_bridge_queue_jobs',
    help: 'Jobs in each queue by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      // Summed over the queue shards (same name, one per shard): the label stays events/timers.
      const totals = new Map<string, Record<string, number>>();
      for (const queue of queues) {
        const counts = await queue.getJobCounts(
          'waiting',
          'active',
          'delayed',
          'failed',
          'completed',
          'prioritized',
        );
        const total = totals.get(queue.name) ?? {};
        for (const [state, count] of Object.entries(counts)) total[state] = (total[state] ?? 0) + count;
        totals.set(queue.name, total);
      }
      for (const [name, counts] of totals) {
        for (const [state, count] of Object.entries(counts)) this.set({ queue: name, state }, count);
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
