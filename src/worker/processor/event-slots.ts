import type { BusinessGate } from './business-gate.js';

/**
 * How many events one worker process runs at once (`worker.concurrency`). A job carries a batch
 * of events and runs its conversations side by side, so BullMQ's own per-job concurrency no longer
 * bounds the calls in flight: this does, across every job of the process.
 *
 * With several businesses (issue 26) each event names its business's gate, and a freed slot goes
 * to the waiting event whose business runs the fewest events here (fair share); a business at its
 * share (`worker.business_concurrency`) gets another slot only while no business below its share
 * waits (a slot never stays idle while events wait), and never more than its ceiling (a quarter of the slots stay for the others' events, so
 * a business whose platform hangs cannot hold them all while it is alone). An event of a business
 * that stalls (business-gate.ts) stops waiting (GAVE_UP): its job parks instead of holding a job
 * slot. Without gates the slots are first come, first served, as before.
 */
export interface EventSlots {
  /** Runs `task` once a slot is free, then frees the slot. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** The same for an event of a business: fairly, and GAVE_UP when the business stalls meanwhile. */
  run<T>(task: () => Promise<T>, gate: BusinessGate): Promise<T | typeof GAVE_UP>;
}

/** What `run` returns for an event that stopped waiting because its business stalled. */
export const GAVE_UP = Symbol('gave up');

/** How often waiting events look whether their business stalled. */
const STALL_CHECK_MS = 100;

interface Waiter {
  gate: BusinessGate | undefined;
  wake: (go: boolean) => void;
}

export function createEventSlots(size: number): EventSlots {
  let free = Math.max(1, size);
  const waiting: Waiter[] = [];
  let stallTimer: NodeJS.Timeout | undefined;
  /** No other business below its share waits: past its own share, this one may take a slot. */
  const noneBelowShareWaits = (gate: BusinessGate) =>
    waiting.every((w) => w.gate === gate || w.gate === undefined || w.gate.running >= w.gate.cap);
  const mayRun = (gate: BusinessGate | undefined) =>
    gate === undefined ||
    gate.running < gate.cap ||
    (gate.running < gate.ceiling && noneBelowShareWaits(gate));
  /** The waiter a free slot goes to: the first, or with gates the one of the business running least. */
  const next = (): number => {
    let best = -1;
    for (let i = 0; i < waiting.length; i++) {
      const gate = (waiting[i] as Waiter).gate;
      if (gate === undefined) return best === -1 ? i : best;
      if (!mayRun(gate)) continue;
      if (best === -1 || gate.running < ((waiting[best] as Waiter).gate?.running ?? 0)) best = i;
    }
    return best;
  };
  const dispatch = () => {
    while (free > 0 && waiting.length > 0) {
      const index = next();
      if (index === -1) return;
      const [waiter] = waiting.splice(index, 1);
      free -= 1;
      waiter?.gate?.start();
      waiter?.wake(true);
    }
  };
  /** Waiters of stalled businesses give up (their jobs park); checked while gated events wait. */
  const watchStalls = () => {
    if (stallTimer !== undefined) return;
    stallTimer = setInterval(() => {
      const now = Date.now();
      for (let i = waiting.length - 1; i >= 0; i--) {
        const waiter = waiting[i] as Waiter;
        if (waiter.gate?.isStalled(now)) {
          waiting.splice(i, 1);
          waiter.wake(false);
        }
      }
      if (!waiting.some((w) => w.gate !== undefined)) {
        clearInterval(stallTimer);
        stallTimer = undefined;
      }
    }, STALL_CHECK_MS);
    stallTimer.unref();
  };
  async function run<T>(task: () => Promise<T>, gate?: BusinessGate): Promise<T | typeof GAVE_UP> {
    if (free > 0 && (gate === undefined ? waiting.length === 0 : mayRun(gate))) {
      free -= 1;
      gate?.start();
    } else {
      const go = await new Promise<boolean>((resolve) => {
        waiting.push({ gate, wake: resolve });
        if (gate) watchStalls();
      });
      if (!go) return GAVE_UP;
    }
    try {
      return await task();
    } finally {
      free += 1;
      gate?.finish();
      dispatch();
    }
  }
  return { run } as EventSlots;
}
