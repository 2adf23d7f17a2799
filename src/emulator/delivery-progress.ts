import type { DeliveryStatus, StoredMessage } from './emulator-state.js';

/**
 * How an outbound message's `delivery_status` moves pending -> sent -> delivered (-> read), or
 * pending -> failed outside the channel's reply window. The spec does not show these transitions;
 * this progression is the emulator's choice (docs/emulator.md).
 *   immediate: the message is stored at its final status (cheapest; the default);
 *   manual:    it moves one step per `advance()` (admin: POST /_emulator/delivery/advance);
 *   tick:      it moves one step every `stepMs`, on one shared timer.
 */
export type DeliveryMode =
  | { readonly kind: 'immediate' }
  | { readonly kind: 'manual' }
  | { readonly kind: 'tick'; readonly stepMs: number };

/** The status after one step, or undefined when `current` is final. */
export function nextDeliveryStatus(
  current: DeliveryStatus,
  outsideWindow: boolean,
  finalStatus: 'delivered' | 'read',
): DeliveryStatus | undefined {
  switch (current) {
    case 'pending':
      return outsideWindow ? 'failed' : 'sent';
    case 'sent':
      return 'delivered';
    case 'delivered':
      return finalStatus === 'read' ? 'read' : undefined;
    case 'read':
    case 'failed':
      return undefined;
  }
}

interface Tracked {
  readonly message: StoredMessage;
  readonly outsideWindow: boolean;
  dueAtMs: number;
}

export class DeliveryProgress {
  private queue: Tracked[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly mode: DeliveryMode,
    private readonly finalStatus: 'delivered' | 'read',
    private readonly now: () => number,
  ) {}

  track(message: StoredMessage, outsideWindow: boolean): void {
    if (this.mode.kind === 'immediate') {
      for (let step = 0; step < 4; step += 1) {
        const next = nextDeliveryStatus(message.deliveryStatus, outsideWindow, this.finalStatus);
        if (next === undefined) break;
        message.deliveryStatus = next;
      }
      return;
    }
    const stepMs = this.mode.kind === 'tick' ? this.mode.stepMs : 0;
    this.queue.push({ message, outsideWindow, dueAtMs: this.now() + stepMs });
    this.startTimer();
  }

  /** Moves every tracked message one step (manual mode, or to hurry tick mode). Returns how many moved. */
  advance(): number {
    const entries = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    let moved = 0;
    for (const entry of entries) {
      if (this.step(entry)) moved += 1;
    }
    return moved;
  }

  /** Messages still on their way (not yet at a final status). */
  get pending(): number {
    return this.queue.length - this.head;
  }

  clear(): void {
    this.queue = [];
    this.head = 0;
    this.stopTimer();
  }

  close(): void {
    this.clear();
  }

  /** Advances one entry; re-queues it when it is not final yet. */
  private step(entry: Tracked): boolean {
    const next = nextDeliveryStatus(entry.message.deliveryStatus, entry.outsideWindow, this.finalStatus);
    if (next === undefined) return false;
    entry.message.deliveryStatus = next;
    if (nextDeliveryStatus(next, entry.outsideWindow, this.finalStatus) !== undefined) {
      entry.dueAtMs += this.mode.kind === 'tick' ? this.mode.stepMs : 0;
      this.queue.push(entry);
    }
    return true;
  }

  private tick(): void {
    const now = this.now();
    // Entries are queued in due order (constant step), so stop at the first one not due yet.
    const end = this.queue.length;
    while (this.head < end) {
      const entry = this.queue[this.head];
      if (!entry || entry.dueAtMs > now) break;
      this.head += 1;
      this.step(entry);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.pending === 0) this.stopTimer();
  }

  private startTimer(): void {
    if (this.mode.kind !== 'tick' || this.timer) return;
    const interval = Math.max(1, Math.floor(this.mode.stepMs / 2));
    this.timer = setInterval(() => this.tick(), interval);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
