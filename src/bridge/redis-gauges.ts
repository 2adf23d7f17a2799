import { Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../base/with-deadline.js';
import type { RedisClient } from '../redis/redis-client.js';
import { fewestReplicas } from '../redis/replica-count.js';

export interface RedisGaugeDeps {
  /** The control connection (control-redis.ts). */
  redis: RedisClient;
  /** True while the outage reporter says Redis is away (redis-outage.ts). */
  isDown: () => boolean;
  /** `redis.replicas_ack`: the replicas each event must reach before its webhook is answered 200. */
  replicasAck: number;
  /** Bound on each read at scrape time, so that /metrics answers while Redis does not. */
  deadlineMs?: number;
}

/**
 * What the alerts of deploy/prometheus/alerts.yml need to know about Redis itself,
 * read when Prometheus scrapes, never per event:
 * - `convo_bridge_redis_up`: 0 while this process cannot reach Redis (webhooks 503, the worker
 *   waits); an alert on it needs /metrics to answer during the outage, hence the deadline;
 * - `convo_bridge_redis_replicas` and `_replicas_wanted`: the fewest online replicas of any
 *   primary against `redis.replicas_ack`. Fewer than wanted and every webhook whose event lands
 *   on that primary is answered 503 (without this gauge, such a cluster is silently unusable).
 *   No sample while Redis does not answer (the Redis alert says so) or INFO is refused.
 */
export function registerRedisGauges(registry: Registry, deps: RedisGaugeDeps): void {
  const { redis, isDown, replicasAck } = deps;
  const deadlineMs = deps.deadlineMs ?? 2_000;
  const reachable = () => !isDown() && redis.status === 'ready';
  new Gauge({
    name: 'convo_bridge_redis_up',
    help: '1 while Redis answers this process, 0 while it does not (webhooks are answered 503, the worker waits).',
    registers: [registry],
    async collect() {
      if (!reachable()) {
        this.set(0);
        return;
      }
      const answered = await withDeadline(redis.ping(), deadlineMs, 'Redis PING').then(
        () => true,
        () => false,
      );
      this.set(answered ? 1 : 0);
    },
  });
  new Gauge({
    name: 'convo_bridge_redis_replicas',
    help: 'The fewest online replicas of any Redis primary (INFO replication); compare with convo_bridge_redis_replicas_wanted.',
    registers: [registry],
    async collect() {
      if (!reachable()) {
        this.remove({});
        return;
      }
      try {
        this.set(await withDeadline(fewestReplicas(redis), deadlineMs, 'Redis INFO replication'));
      } catch {
        this.remove({});
      }
    },
  });
  new Gauge({
    name: 'convo_bridge_redis_replicas_wanted',
    help: 'redis.replicas_ack: replicas each event must reach before its webhook is answered 200.',
    registers: [registry],
  }).set(replicasAck);
}
