import type { Queue } from 'bullmq';
import { withDeadline } from '../base/with-deadline.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { BridgeState } from './bridge-state.js';
import type { OutageReporter } from './redis-outage.js';

export interface ReadinessDeps {
  state: Readonly<BridgeState>;
  outage: OutageReporter;
  /** The control connection. */
  redis: RedisClient;
  /** Where Redis is, for the reason. */
  address: string;
  /** The worker, when this process runs one (`start`, `work`). */
  worker: { isRunning(): boolean; finishedJobs(): number } | undefined;
  /** The events queue of each shard. */
  eventQueues: readonly Queue[];
  /** Jobs waiting and none finished for this long means not ready. */
  stallWindowMs: number;
  /** A receiver's replica check (replica-check.ts): why webhooks cannot be acknowledged, or null. */
  replicas?: (() => string | null) | undefined;
}

/**
 * The answer of /readyz: null when ready, else the reason. Not ready while shutting down, while
 * the key layout does not match, while Redis does not answer, while the primaries have fewer
 * replicas than `redis.replicas_ack` (webhooks are answered 503), and while jobs wait but this
 * process's workers finish none (a stalled worker) unless the platform's rate limit is what holds
 * them.
 */
export function createReadiness(deps: ReadinessDeps): () => Promise<string | null> {
  const { state, outage, redis, address, worker, eventQueues, stallWindowMs, replicas } = deps;
  const sumOf = async (read: (queue: (typeof eventQueues)[number]) => Promise<number>) =>
    (await Promise.all(eventQueues.map(read))).reduce((a, b) => a + b, 0);
  let lastProgressAt = Date.now();
  let lastFinished = -1;
  return async (): Promise<string | null> => {
    if (state.shuttingDown) return 'shutting down';
    if (state.layoutProblem) return state.layoutProblem.message;
    if (outage.isDown() || redis.status !== 'ready') return `Redis at ${address} does not answer`;
    const replicaProblem = replicas?.() ?? null;
    if (replicaProblem !== null) return replicaProblem;
    if (!worker) return null;
    const waiting = await withDeadline(
      sumOf((queue) => queue.getWaitingCount()),
      2_000,
      'the waiting count',
    ).catch(() => null);
    if (waiting === null) return `Redis at ${address} does not answer`;
    if (waiting === 0) {
      lastProgressAt = Date.now();
      return null;
    }
    if (!worker.isRunning()) return `the worker has stopped taking jobs while ${waiting} are waiting`;
    // Counted by this process's workers: done jobs are not kept in Redis to be counted.
    const finished = worker.finishedJobs();
    if (finished !== lastFinished) {
      lastFinished = finished;
      lastProgressAt = Date.now();
    }
    const rateLimited = (await sumOf((queue) => queue.getRateLimitTtl()).catch(() => 0)) > 0;
    if (!rateLimited && Date.now() - lastProgressAt > stallWindowMs) {
      return `no job finished for ${Math.round((Date.now() - lastProgressAt) / 1000)} s while ${waiting} are waiting`;
    }
    return null;
  };
}
