import { DelayedError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import { describeError } from '../../base/errors.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { BusinessPaused, type PauseReason } from '../failures/job-failure-policy.js';

/**
 * Isolation of one business from the others in a bridge that serves several (issue 26). The
 * businesses share the queues (a BullMQ worker per business would cost about 230 KB and a Redis
 * connection each, far too much for 200 businesses), so what BullMQ does per queue is done here
 * per business, in this process:
 * - **pauses**: a 429 or a refusal of the credentials pauses this business only; its jobs taken
 *   meanwhile wait in the delayed set until the pause ends (no attempt used);
 * - **fair share**: at most `cap` of its jobs run at once here (`worker.business_concurrency`),
 *   so a business that floods the bridge, or whose platform hangs, cannot take every slot. A job
 *   over the cap is parked: its id goes to the business's parked list (in its shard's hash tag)
 *   and the job to the delayed set; each job of the business that finishes here wakes the oldest
 *   parked one. A parked job that nobody wakes (its waker died) comes back by itself after
 *   PARK_MAX_MS.
 */
export const PARK_MAX_MS = 60_000;

export class BusinessGate {
  /** Epoch ms until which this business's jobs wait (a 429, refused credentials); 0: not paused. */
  pausedUntil = 0;
  /** Why it was last paused. */
  pauseReason: PauseReason | null = null;
  /** Its jobs running in this process now. */
  running = 0;
  /** Per parked list (one per queue shard): jobs this process parked there and has not woken yet. */
  private readonly parked = new Map<string, { lane: BusinessLane; count: number }>();

  constructor(
    readonly id: string,
    readonly cap: number,
    private readonly log: Logger,
  ) {}

  pause(ms: number, reason: PauseReason, now = Date.now()): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    this.pauseReason = reason;
  }

  isPaused(now = Date.now()): boolean {
    return this.pausedUntil > now;
  }

  /**
   * Runs `process` for a job of this business when it may run now; otherwise moves the job to the
   * delayed set (paused: until the pause ends; over the cap: parked) and throws DelayedError.
   * `lane` null: not counted against the cap (timers, which are few and already due).
   */
  async admit<T>(
    job: Job,
    token: string | undefined,
    lane: BusinessLane | null,
    process: () => Promise<T>,
  ): Promise<T> {
    const now = Date.now();
    if (this.isPaused(now)) {
      await job.moveToDelayed(this.pausedUntil, token);
      throw new DelayedError();
    }
    if (lane === null) return this.runPausable(job, token, process);
    if (this.running >= this.cap) {
      const entry = this.parked.get(lane.parkedKey) ?? { lane, count: 0 };
      entry.count += 1;
      this.parked.set(lane.parkedKey, entry);
      await lane.redis.rpush(lane.parkedKey, job.id ?? '');
      await job.moveToDelayed(now + PARK_MAX_MS, token);
      throw new DelayedError();
    }
    this.running += 1;
    try {
      return await this.runPausable(job, token, process);
    } finally {
      this.running -= 1;
      const waiting = this.parked.get(lane.parkedKey) ?? this.parked.values().next().value;
      if (waiting !== undefined) void this.wakeOne(waiting);
    }
  }

  /** Runs the job; when its run paused the business (BusinessPaused), the job waits until the pause ends. */
  private async runPausable<T>(job: Job, token: string | undefined, process: () => Promise<T>): Promise<T> {
    try {
      return await process();
    } catch (error) {
      if (!(error instanceof BusinessPaused)) throw error;
      await job.moveToDelayed(Math.max(this.pausedUntil, Date.now() + error.ms), token);
      throw new DelayedError();
    }
  }

  /** Wakes every job parked in a lane (the business was just added: jobs waited for it). */
  async wakeAll(lane: BusinessLane): Promise<void> {
    try {
      for (let woken = 0; woken < 100_000; woken++) {
        const id = await lane.redis.lpop(lane.parkedKey);
        if (id === null) return;
        await (await lane.queue.getJob(id))?.promote().catch(() => undefined);
      }
    } catch (error) {
      this.log.warn(
        { business: this.id, err: describeError(error) },
        'could not wake the parked jobs (they come back by themselves)',
      );
    }
  }

  /**
   * Wakes the oldest job parked in one list (the finished job's shard first), skipping ids whose
   * job is gone or no longer delayed.
   */
  private async wakeOne(entry: { lane: BusinessLane; count: number }): Promise<void> {
    const { lane } = entry;
    try {
      for (let tries = 0; tries < 10; tries++) {
        const id = await lane.redis.lpop(lane.parkedKey);
        entry.count -= 1;
        if (id === null || entry.count <= 0) this.parked.delete(lane.parkedKey);
        if (id === null) return;
        const job = await lane.queue.getJob(id);
        if (
          job &&
          (await job.promote().then(
            () => true,
            () => false,
          ))
        ) {
          return;
        }
      }
    } catch (error) {
      this.log.warn(
        { business: this.id, err: describeError(error) },
        'could not wake a parked job (it comes back by itself)',
      );
    }
  }
}

/** Where a business's jobs of one queue shard are parked: the shard's events queue and the business's list. */
export interface BusinessLane {
  readonly redis: RedisClient;
  readonly queue: Queue;
  readonly parkedKey: string;
}
