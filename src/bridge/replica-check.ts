import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import type { RedisClient } from '../redis/redis-client.js';
import { type PrimaryReplicas, readReplicaCounts } from '../redis/replica-count.js';

/** Whether the primaries have the replicas `redis.replicas_ack` asks for, as last checked. */
export interface ReplicaCheck {
  /** Why webhooks cannot be acknowledged (too few replicas), or null. */
  problem(): string | null;
  stop(): void;
}

/**
 * What is wrong when some primaries have fewer replicas than `replicasAck`, or null. Every webhook
 * whose event is stored on such a primary is answered 503 (WAIT never gets its replicas: a
 * cluster without replicas would answer every webhook 503 while /readyz said 200).
 */
export function describeMissingReplicas(
  counts: readonly PrimaryReplicas[],
  replicasAck: number,
  address: string,
): string | null {
  const short = counts.filter((count) => count.replicas < replicasAck);
  if (short.length === 0) return null;
  const found = short
    .map((count) => `${count.primary ?? `the primary (${address})`} has ${count.replicas}`)
    .join(', ');
  const which =
    counts.length > 1 ? `${short.length} of ${counts.length} primaries have fewer replicas: ${found}` : found;
  const lowest = Math.min(...short.map((count) => count.replicas));
  return `redis.replicas_ack is ${replicasAck} but ${which}; webhooks whose events are stored there are answered 503 until it has ${replicasAck} replica(s) online (Redis WAIT); add replicas, or set redis.replicas_ack: ${lowest} (then a failover can lose the last acknowledged events)`;
}

/**
 * Checks the replicas when the control connection is (re)connected and every `intervalMs`: says so
 * at once when they fall short of `replicasAck` (one line, again only when what is missing
 * changes) and when they are back; /readyz reads `problem()`. Inert when `replicasAck` is 0.
 */
export function watchReplicas(deps: {
  redis: RedisClient;
  replicasAck: number;
  /** Where Redis is, for the message. */
  address: string;
  log: Logger;
  intervalMs?: number;
}): ReplicaCheck {
  const { redis, replicasAck, address, log } = deps;
  if (replicasAck <= 0) return { problem: () => null, stop: () => {} };
  let problem: string | null = null;
  let checking = false;
  let stopped = false;
  const check = async () => {
    if (checking || stopped || redis.status !== 'ready') return;
    checking = true;
    try {
      const counts = await readReplicaCounts(redis);
      // No primary answered: an outage, which the outage report and /readyz already name.
      if (stopped || counts.length === 0) return;
      const next = describeMissingReplicas(counts, replicasAck, address);
      if (next !== null && next !== problem) log.error({ replicasAck, replicas: counts }, next);
      if (next === null && problem !== null) {
        log.info(
          { replicasAck, replicas: counts },
          `every primary has the ${replicasAck} replica(s) redis.replicas_ack asks for again: webhooks are acknowledged again`,
        );
      }
      problem = next;
    } catch (error) {
      log.debug({ err: describeError(error) }, 'replica check');
    } finally {
      checking = false;
    }
  };
  const onReady = () => void check();
  redis.on('ready', onReady);
  const timer = setInterval(onReady, deps.intervalMs ?? 5_000);
  timer.unref();
  if (redis.status === 'ready') onReady();
  return {
    problem: () => problem,
    stop() {
      stopped = true;
      clearInterval(timer);
      redis.off('ready', onReady);
    },
  };
}
