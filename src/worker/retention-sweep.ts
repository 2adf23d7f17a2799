import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { RetentionSettings } from '../config/config-schema.js';
import type { RedisClient } from '../redis/redis-client.js';

/**
 * BullMQ removes done and failed jobs by age only when another job finishes (its KeepJobs
 * documentation says so): on a quiet bridge they would stay forever. This sweep removes
 * them by age from the queues this process consumes, a bounded number per queue and pass
 * (BullMQ's `clean`, which reads the oldest of the set by score): never a scan of everything, and
 * nothing per event. Completed jobs are removed as they complete by default (`done_events: 0s`);
 * the sweep then only clears what an earlier version or setting left.
 */

/** Jobs removed per queue, state and pass at most; the next pass takes the rest. */
export const SWEEP_BATCH = 1_000;

/** The longest wait between passes; shorter settings sweep more often (half their age, at least 1 s). */
const MAX_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface RetentionSweep {
  stop(): void;
}

/** How often to sweep: half the shortest age kept (so a job stays at most 1.5 times it), within 1 s to 5 min. */
export function sweepIntervalMs(retention: RetentionSettings): number {
  const ages = [retention.doneEventsMs, retention.failedEventsMs].filter((ms) => ms > 0);
  return Math.max(1_000, Math.min(MAX_SWEEP_INTERVAL_MS, ...ages.map((ms) => ms / 2)));
}

/** One pass over the queues: completed and failed jobs older than their retention. */
export async function sweepQueues(
  redis: RedisClient,
  queues: readonly Queue[],
  retention: RetentionSettings,
): Promise<number> {
  let removed = 0;
  for (const queue of queues) {
    removed += await sweepSet(redis, queue, 'completed', retention.doneEventsMs);
    removed += await sweepSet(redis, queue, 'failed', retention.failedEventsMs);
  }
  return removed;
}

/**
 * Removes up to SWEEP_BATCH jobs of one set older than `ageMs`. Looked at first with one ZCOUNT:
 * BullMQ's `clean` writes an entry to the event stream (untrimmed) on every call, even when it
 * removes nothing, which on a quiet bridge would grow the stream pass after pass.
 */
async function sweepSet(
  redis: RedisClient,
  queue: Queue,
  state: 'completed' | 'failed',
  ageMs: number,
): Promise<number> {
  const due = await redis.zcount(`${queue.qualifiedName}:${state}`, '-inf', Date.now() - ageMs);
  if (due === 0) return 0;
  return (await queue.clean(ageMs, SWEEP_BATCH, state)).length;
}

/** Sweeps now (what an earlier setting left) and then every sweepIntervalMs, until stopped. */
export function startRetentionSweep(
  /** The connection the queues share. */
  redis: RedisClient,
  queues: readonly Queue[],
  retention: RetentionSettings,
  log: Logger,
): RetentionSweep {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pass = async () => {
    try {
      const removed = await sweepQueues(redis, queues, retention);
      if (removed > 0) log.debug({ removed }, 'retention: removed done and failed jobs past their age');
    } catch (error) {
      // Redis away: the next pass tries again (the outage itself is reported elsewhere).
      log.debug({ err: String(error) }, 'retention sweep failed; trying again at the next pass');
    }
    if (!stopped) {
      timer = setTimeout(() => void pass(), sweepIntervalMs(retention));
      timer.unref();
    }
  };
  timer = setTimeout(() => void pass(), 0);
  timer.unref();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
