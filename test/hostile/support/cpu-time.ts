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
