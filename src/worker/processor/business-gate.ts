import type { PauseReason } from '../failures/job-failure-policy.js';

/**
 * How long a business at its share may go without an event finishing before its events park
 * instead of waiting in their job: its platform hangs or is slow, and waiting would hold job slots.
 */
export const STALLED_AFTER_MS = 500;

/**
 * Isolation of one business from the others in a bridge that serves several. Every business has
 * one; while it is served alone there is no one to isolate it from (`isolates` false): its events
 * take the slots first come, first served, and a 429 pauses the queues as BullMQ does. The
 * businesses share the queues and the batches (a BullMQ worker per business would cost about
 * 230 KB and a Redis connection each, far too much for 200 businesses; a batch per business would
 * make each event of a spread load its own batch), so what BullMQ does per queue is done here per
 * business and per event, in this process:
 * - **pauses**: a 429 or a refusal of the credentials pauses this business only; its events wait
 *   (their job parks until the pause ends, no attempt used) while the batch's other events run;
 * - **fair share**: the process's event slots go to the business running the fewest events, and a
 *   business at `cap` (`worker.business_concurrency`) gets one more only while no other business
 *   waits (event-slots.ts);
 * - **a stalled business** (at its share, and no event of it finished for STALLED_AFTER_MS: its
 *   platform hangs) holds no job slots: its further events park with their job, which is woken
 *   when one of the business's events finishes.
 */
export class BusinessGate {
  /** Epoch ms until which this business's events wait (a 429, refused credentials); 0: not paused. */
  pausedUntil = 0;
  /** Why it was last paused. */
  pauseReason: PauseReason | null = null;
  /** Its events running in this process now (counted by the event slots). */
  running = 0;
  /** When one of its events last started below its share or finished (ms). */
  private lastProgressAt = Date.now();
  /** Jobs parked while it was stalled, oldest first: each is woken once (promoted). */
  private readonly parked: (() => void)[] = [];

  /** Most of its events that run here at once even when no other business waits. */
  ceiling: number;
  /** Other businesses share this process: pauses, fair share and stalls are this business's own. */
  isolates = true;

  constructor(
    readonly id: string,
    /** Its share of the process's event slots (`worker.business_concurrency`). */
    readonly cap: number,
    /** The process's event slots (`worker.concurrency`): a quarter of them stay for the others. */
    private readonly slots: number,
  ) {
    this.ceiling = this.ceilingAmong(2);
  }

  /** Its ceiling when the bridge serves `businesses` businesses: all the slots when it is the only one. */
  ceilingAmong(businesses: number): number {
    if (businesses <= 1) return this.slots;
    return Math.max(this.cap, this.slots - Math.max(1, Math.floor(this.slots / 4)));
  }

  /** The table serves `businesses` businesses now (set when it changes). */
  serving(businesses: number): void {
    this.ceiling = this.ceilingAmong(businesses);
    this.isolates = businesses > 1;
  }

  /**
   * A 429 or refused credentials of this business: paused alone when others share the process
   * (true); false when it is served alone, and the caller pauses the queues instead.
   */
  pauseAmongOthers(ms: number, reason: PauseReason): boolean {
    if (!this.isolates) return false;
    this.pause(ms, reason);
    return true;
  }

  pause(ms: number, reason: PauseReason, now = Date.now()): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    this.pauseReason = reason;
  }

  isPaused(now = Date.now()): boolean {
    return this.pausedUntil > now;
  }

  /** At its share with no event finished for a while: its events should not wait in their jobs. */
  isStalled(now = Date.now()): boolean {
    return this.running >= this.cap && now - this.lastProgressAt > STALLED_AFTER_MS;
  }

  /** One of its events takes a slot (event-slots.ts). */
  start(): void {
    if (this.running < this.cap) this.lastProgressAt = Date.now();
    this.running += 1;
  }

  /** One of its events gave its slot back: progress, and the oldest parked job is woken. */
  finish(): void {
    this.running -= 1;
    this.lastProgressAt = Date.now();
    this.parked.shift()?.();
  }

  /** Calls `wake` once, when one of this business's events finishes here. */
  onRoom(wake: () => void): void {
    // Bounded: past it a parked job comes back by itself (its recheck) rather than by a wake.
    if (this.parked.length < 10_000) this.parked.push(wake);
  }
}
