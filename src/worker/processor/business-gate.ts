import type { PauseReason } from '../failures/job-failure-policy.js';

/**
 * Isolation of one business from the others in a bridge that serves several (issue 26). The
 * businesses share the queues and the batches (a BullMQ worker per business would cost about
 * 230 KB and a Redis connection each, far too much for 200 businesses; a batch per business would
 * make each event of a spread load its own batch), so what BullMQ does per queue is done here per
 * business and per event, in this process:
 * - **pauses**: a 429 or a refusal of the credentials pauses this business only; its events wait
 *   (their job parks until the pause ends, no attempt used) while the batch's other events run;
 * - **fair share**: at most `cap` of its events run at once here (`worker.business_concurrency`),
 *   so a business that floods the bridge, or whose platform hangs, cannot take every slot. Its
 *   events over the cap wait the same way, and each of its events that finishes wakes the oldest
 *   job parked for room.
 */
export class BusinessGate {
  /** Epoch ms until which this business's events wait (a 429, refused credentials); 0: not paused. */
  pausedUntil = 0;
  /** Why it was last paused. */
  pauseReason: PauseReason | null = null;
  /** Its events running in this process now. */
  running = 0;
  /** Jobs parked for room, oldest first: each is woken once (promoted). */
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly id: string,
    readonly cap: number,
  ) {}

  pause(ms: number, reason: PauseReason, now = Date.now()): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    this.pauseReason = reason;
  }

  isPaused(now = Date.now()): boolean {
    return this.pausedUntil > now;
  }

  /** Takes a slot for one event; false when `cap` of this business's events run here already. */
  tryStart(): boolean {
    if (this.running >= this.cap) return false;
    this.running += 1;
    return true;
  }

  /** Gives an event's slot back and wakes the oldest job parked for room. */
  finish(): void {
    this.running -= 1;
    this.waiting.shift()?.();
  }

  /** Calls `wake` once, when one of this business's running events finishes here. */
  onRoom(wake: () => void): void {
    // Bounded: past it a parked job comes back by itself (its recheck) rather than by a wake.
    if (this.waiting.length < 10_000) this.waiting.push(wake);
  }
}
