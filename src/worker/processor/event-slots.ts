import type { BusinessGate } from './business-gate.js';

/**
 * How many events one worker process runs at once (`worker.concurrency`). A job carries a batch
 * of events and runs its conversations side by side, so BullMQ's own per-job concurrency no longer
 * bounds the calls in flight: this does, across every job of the process.
 *
 * With several businesses each event names its business's gate, and a freed slot goes
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

type Wake = (go: boolean) => void;

export function createEventSlots(size: number): EventSlots {
  let free = Math.max(1, size);
  /**
   * The waiting events, first come first: per business (gate) with several businesses, so that
   * choosing the next costs the number of waiting businesses, not of waiting events; one queue
   * (key undefined) without gates.
   */
  const queues = new Map<BusinessGate | undefined, Wake[]>();
  let waitingCount = 0;
  let stallTimer: NodeJS.Timeout | undefined;
  const enqueue = (gate: BusinessGate | undefined, wake: Wake) => {
    const queue = queues.get(gate);
    if (queue) queue.push(wake);
    else queues.set(gate, [wake]);
    waitingCount += 1;
  };
  const dequeue = (gate: BusinessGate | undefined): Wake | undefined => {
    const queue = queues.get(gate);
    const wake = queue?.shift();
    if (queue && queue.length === 0) queues.delete(gate);
    if (wake) waitingCount -= 1;
    return wake;
  };
  /** No other business below its share waits: past its own share, this one may take a slot. */
  const noneBelowShareWaits = (gate: BusinessGate) => {
    for (const other of queues.keys())
      if (other !== gate && other !== undefined && other.running < other.cap) return false;
    return true;
  };
  const mayRun = (gate: BusinessGate | undefined) =>
    gate === undefined ||
    gate.running < gate.cap ||
    (gate.running < gate.ceiling && noneBelowShareWaits(gate));
  /** Whose event a free slot goes to: the first waiter's, or with gates the business running least. */
  const next = (): BusinessGate | undefined | null => {
    let best: BusinessGate | null = null;
    for (const gate of queues.keys()) {
      if (gate === undefined) return undefined;
      if (!mayRun(gate)) continue;
      if (best === null || gate.running < best.running) best = gate;
    }
    return best;
  };
  const dispatch = () => {
    while (free > 0 && waitingCount > 0) {
      const gate = next();
      if (gate === null) return;
      const wake = dequeue(gate);
      if (wake === undefined) return;
      free -= 1;
      gate?.start();
      wake(true);
    }
  };
  /** Waiting events of stalled businesses give up (their jobs park); checked while gated events wait. */
  const watchStalls = () => {
    if (stallTimer !== undefined) return;
    stallTimer = setInterval(() => {
      const now = Date.now();
      for (const [gate, queue] of queues) {
        if (gate === undefined || !gate.isStalled(now)) continue;
        queues.delete(gate);
        waitingCount -= queue.length;
        for (const wake of queue) wake(false);
      }
      let gated = false;
      for (const gate of queues.keys()) if (gate !== undefined) gated = true;
      if (!gated) {
        clearInterval(stallTimer);
        stallTimer = undefined;
      }
    }, STALL_CHECK_MS);
    stallTimer.unref();
  };
  async function run<T>(task: () => Promise<T>, gate?: BusinessGate): Promise<T | typeof GAVE_UP> {
    if (free > 0 && (gate === undefined ? waitingCount === 0 : mayRun(gate))) {
      free -= 1;
      gate?.start();
    } else {
      const go = await new Promise<boolean>((resolve) => {
        enqueue(gate, resolve);
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
