import type { JobsOptions, KeepJobs, QueueOptions } from 'bullmq';
import type { RetentionSettings } from '../config/config-schema.js';

/**
 * What BullMQ keeps of the bridge's jobs, from the config's `retention:` section: the
 * data of done events and fired timers (completed jobs) is removed the moment the job completes by
 * default (`done_events: 0s`), or kept by age; failed jobs by age. Both with a count cap, as
 * before. BullMQ applies these when a job finishes; the worker's retention sweep
 * (worker/retention-sweep.ts) removes by age on a quiet bridge, where no job finishes to do it.
 */

/** At most this many completed (when kept by age) or failed jobs per queue. */
export const KEPT_JOBS_CAP = 10_000;

/** `removeOnComplete` and `removeOnFail` of every job the bridge adds (and its workers' fallback). */
export function keptJobs(retention: RetentionSettings): {
  removeOnComplete: KeepJobs;
  removeOnFail: KeepJobs;
} {
  return {
    // count 0: BullMQ deletes the job's keys as it completes, instead of adding it to the set.
    removeOnComplete:
      retention.doneEventsMs === 0
        ? { count: 0 }
        : { age: Math.ceil(retention.doneEventsMs / 1000), count: KEPT_JOBS_CAP },
    removeOnFail: { age: Math.ceil(retention.failedEventsMs / 1000), count: KEPT_JOBS_CAP },
  };
}

/**
 * Job options shared by the receiver (which adds event jobs) and the worker (which adds timer
 * jobs): attempts with our own capped, jittered backoff (`custom`, computed by the worker's
 * backoffStrategy), and what is kept once they are done.
 */
export function bridgeJobOptions(attempts: number, retention: RetentionSettings): JobsOptions {
  return { attempts, backoff: { type: 'custom' }, ...keptJobs(retention) };
}

/**
 * The length of a queue's BullMQ event stream (`<prefix>:<queue>:events`): BullMQ writes it to the
 * queue's meta hash when a Queue is made, and every script trims the stream to it (approximately,
 * `XADD MAXLEN ~`). Each entry names a job and carries what it returned or why it failed.
 */
export function eventStreamOptions(retention: RetentionSettings): Pick<QueueOptions, 'streams'> {
  return { streams: { events: { maxLen: retention.eventStreamMaxLen } } };
}
