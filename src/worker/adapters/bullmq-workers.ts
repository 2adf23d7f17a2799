import { type Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { RetentionSettings, WorkerSettings } from '../../config/config-schema.js';
import { bullmqTelemetry } from '../../observe/trace-context.js';
import { keptJobs } from '../../queue/job-options.js';
import { QUEUE_NAMES } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { jobRetryDelay } from '../failures/backoff.js';
import type { WorkerConnections } from './worker-connections.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** Times a job may be recovered from a dead worker before BullMQ fails it (the order gate then skips it). */
const MAX_STALLED_COUNT = 5;

/**
 * What the shard's workers run and count their jobs with: the businesses served
 * (businesses/business-table.ts), stated here so that this adapter does not import them back.
 */
export interface ShardJobRunner {
  /** Runs a job of the `events` queue with its business's context for this shard. */
  processEvent(job: Job, token: string | undefined, shard: number): Promise<unknown>;
  /** Runs a job of the `timers` queue (a timer or a burst) likewise. */
  processTimer(job: Job, token: string | undefined, shard: number): Promise<unknown>;
  /** The metrics of the job's business (undefined: none kept). */
  metricsOf(job: Job | undefined): WorkerMetrics | undefined;
}

/**
 * The two BullMQ workers of one shard (events, timers), each on a connection of its own, running
 * the processors with the shard's context; their outcomes are counted and retries logged.
 */
export function createShardWorkers(input: {
  /** The businesses served: each job runs with its business's context for this shard. */
  table: ShardJobRunner;
  shard: number;
  /** The shard's queue prefix. */
  prefix: string;
  /** Appended to the connection names (`-<shard>` when there are several shards). */
  tag: string;
  connections: WorkerConnections;
  settings: WorkerSettings;
  retention: RetentionSettings;
  /** Called each time a job completes or fails. */
  onFinished: () => void;
  log: Logger;
}): Worker[] {
  const { table, shard, prefix, tag, connections, settings, retention, log } = input;
  const eventsWorker = new Worker(
    QUEUE_NAMES.events,
    (job, token) => table.processEvent(job, token, shard),
    workerOptions(connections.forWorker(`events${tag}`), prefix, settings, retention),
  );
  const timersWorker = new Worker(
    QUEUE_NAMES.timers,
    (job, token) => table.processTimer(job, token, shard),
    workerOptions(connections.forWorker(`timers${tag}`), prefix, settings, retention),
  );
  track(eventsWorker, 'events', table, log);
  track(timersWorker, 'timers', table, log);
  for (const worker of [eventsWorker, timersWorker]) {
    worker.on('completed', input.onFinished);
    worker.on('failed', input.onFinished);
  }
  return [eventsWorker, timersWorker];
}

function workerOptions(
  connection: RedisClient,
  prefix: string,
  settings: WorkerSettings,
  retention: RetentionSettings,
) {
  return {
    connection,
    prefix,
    ...bullmqTelemetry(),
    // For jobs added without their own (a dead letter's replay): what `retention:` keeps of them.
    ...keptJobs(retention),
    concurrency: settings.concurrency,
    autorun: false,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: MAX_STALLED_COUNT,
    // Manual rate limiting (queue.rateLimit on 429/401) only takes effect when a limiter is set;
    // this one is far above any real rate, the platform budget itself is enforced per call.
    limiter: { max: 1_000_000, duration: 1_000 },
    settings: {
      backoffStrategy: (attemptsMade: number) =>
        jobRetryDelay(attemptsMade, settings.backoff.baseMs, settings.backoff.maxMs),
    },
  };
}

function track(worker: Worker, queue: string, table: ShardJobRunner, log: Logger): void {
  worker.on('completed', (job: Job) => {
    const metrics = table.metricsOf(job);
    metrics?.jobs.inc({ queue, outcome: 'completed' });
    if (queue === 'events' && metrics && Array.isArray(job.data?.events)) {
      const now = Date.now();
      for (const item of job.data.events as { event?: { receivedAt?: unknown } }[]) {
        const at = item.event?.receivedAt;
        if (typeof at === 'string') metrics.eventLatency.observe({}, (now - Date.parse(at)) / 1000);
      }
    }
  });
  worker.on('failed', (job: Job | undefined, error: Error) => {
    const outcome = error.name === 'UnrecoverableError' ? 'dead_lettered' : 'retried';
    table.metricsOf(job)?.jobs.inc({ queue, outcome });
    if (outcome === 'retried') {
      const event = job?.data?.event ?? job?.data?.events?.[0]?.event;
      log.warn(
        {
          jobId: job?.id,
          ...(typeof job?.data?.business === 'string' ? { business: job.data.business } : {}),
          events: Array.isArray(job?.data?.events) ? job.data.events.length : undefined,
          conversationId: event?.conversationId ?? job?.data?.conversationId,
          eventKey: event?.key,
          attempt: job?.attemptsMade,
          err: error.message,
        },
        `${queue} job will be retried`,
      );
    }
  });
  worker.on('error', (error: Error) => log.error({ err: error.message }, `${queue} worker error`));
}
