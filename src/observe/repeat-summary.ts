/** Occurrences of one kind counted since the last line logged for it. */
interface Tally<T> {
  count: number;
  last: T;
  timer: NodeJS.Timeout;
}

export interface RepeatSummary<T> {
  /**
   * One occurrence of `key` (e.g. an error message). The first of an interval is logged at once
   * (`repeated` 0); the others are counted, and logged as one line with their count (`repeated`,
   * and the last occurrence) when the interval ends.
   */
  note(key: string, occurrence: T): void;
  /** Logs what was counted and not logged yet, and stops the timers (a closing receiver). */
  flush(): void;
}

/** Most kinds counted at once; past it an occurrence is logged as it comes (never lost, never unbounded). */
const MAX_KINDS = 100;

/**
 * Repeated identical failures as one line per interval with a count, never one line per
 * occurrence: 200 webhooks answered 503 for the same reason were 200 warnings.
 */
export function createRepeatSummary<T>(options: {
  intervalMs: number;
  log: (occurrence: T, repeated: number) => void;
}): RepeatSummary<T> {
  const { intervalMs, log } = options;
  const tallies = new Map<string, Tally<T>>();
  const close = (key: string) => {
    const tally = tallies.get(key);
    if (tally === undefined) return;
    tallies.delete(key);
    clearTimeout(tally.timer);
    if (tally.count > 0) log(tally.last, tally.count);
  };
  const open = (key: string, occurrence: T) => {
    const timer = setTimeout(() => {
      const tally = tallies.get(key);
      close(key);
      // Still coming: a new interval, whose first line is the count above.
      if (tally && tally.count > 0) open(key, tally.last);
    }, intervalMs);
    timer.unref();
    tallies.set(key, { count: 0, last: occurrence, timer });
  };
  return {
    note(key, occurrence) {
      const tally = tallies.get(key);
      if (tally !== undefined) {
        tally.count += 1;
        tally.last = occurrence;
        return;
      }
      log(occurrence, 0);
      if (tallies.size < MAX_KINDS) open(key, occurrence);
    },
    flush() {
      for (const key of [...tallies.keys()]) close(key);
    },
  };
}
