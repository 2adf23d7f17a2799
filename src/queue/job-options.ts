import type { JobsOptions } from 'bullmq';

/**
 * Job options shared by the receiver (which adds event jobs) and the worker (which adds timer
 * jobs): attempts with our own capped, jittered backoff (`custom`, computed by the worker's
 * backoffStrategy), and retention that keeps Redis memory bounded.
 */
export interface JobRetention {
  attempts: number;
  completedAgeSeconds?: number;
  completedCount?: number;
  failedAgeSeconds?: number;
  failedCount?: number;
}

export function bridgeJobOptions(retention: JobRetention): JobsOptions {
  return {
    attempts: retention.attempts,
    backoff: { type: 'custom' },
    removeOnComplete: {
      age: retention.completedAgeSeconds ?? 3600,
      count: retention.completedCount ?? 10_000,
    },
    removeOnFail: {
      age: retention.failedAgeSeconds ?? 7 * 24 * 3600,
      count: retention.failedCount ?? 10_000,
    },
  };
}
