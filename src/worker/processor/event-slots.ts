/**
 * How many events one worker process runs at once (`worker.concurrency`). A job carries a batch
 * of events and runs its conversations side by side, so BullMQ's own per-job concurrency no longer
 * bounds the calls in flight: this does, across every job of the process.
 */
export interface EventSlots {
  /** Runs `task` once a slot is free, and frees the slot when it settles. */
  run<T>(task: () => Promise<T>): Promise<T>;
}

export function createEventSlots(size: number): EventSlots {
  let free = Math.max(1, size);
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return {
    async run(task) {
      if (free > 0) free -= 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
