/**
 * CPU time of this process in milliseconds (user + system). Ratios of CPU time stay meaningful on
 * a machine whose other processes take the cores for seconds at a time, where wall-clock time
 * would measure them rather than the code under test.
 */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The smallest CPU time of `repeats` calls (noise only ever adds time). */
export function fastestCpuMs(repeats: number, run: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeats; i++) {
    const started = cpuMs();
    run();
    best = Math.min(best, cpuMs() - started);
  }
  return best;
}

export interface Doubling {
  /** Fastest CPU time of the smaller input. */
  small: number;
  /** Fastest CPU time of the input twice as large. */
  large: number;
  ratio: number;
}

/**
 * How the CPU time grows when the input doubles: about 2 for linear work, 4 for quadratic. The
 * two sizes are timed alternately (a burst of load then hits both alike), each the fastest of
 * `repeats`; when the ratio is at or over `limit`, it is measured again, at most `rounds` times,
 * since noise can only make one side slower while a real quadratic step stays at 4.
 */
export function doublingRatio(
  runSmall: () => void,
  runLarge: () => void,
  options: { repeats?: number; rounds?: number; limit?: number } = {},
): Doubling {
  const { repeats = 5, rounds = 5, limit = 3 } = options;
  let result: Doubling = { small: 0, large: 0, ratio: Number.POSITIVE_INFINITY };
  for (let round = 0; round < rounds && result.ratio >= limit; round++) {
    let small = Number.POSITIVE_INFINITY;
    let large = Number.POSITIVE_INFINITY;
    for (let i = 0; i < repeats; i++) {
      small = Math.min(small, fastestCpuMs(1, runSmall));
      large = Math.min(large, fastestCpuMs(1, runLarge));
    }
    result = { small, large, ratio: large / Math.max(small, 0.05) };
  }
  return result;
}
