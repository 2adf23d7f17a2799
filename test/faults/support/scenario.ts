/**
 * The contract between the runner and a scenario: a scenario runs against real processes at a
 * scale, measures, and returns one row of the final table. It never throws for a failed check
 * (that is `passed: false` with the problems); a throw means it could not run at all.
 */
export type Scale = 'full' | 'reduced';

export type Figure = string | number;

export interface ScenarioResult {
  id: number;
  name: string;
  /** The sizes this run used, e.g. "500 events, 100 conversations". */
  scale: string;
  /** Measured figures, in display order. */
  figures: Record<string, Figure>;
  /** What must hold, in words. */
  expected: string;
  passed: boolean;
  /** Every check that failed, most important first (kept short). */
  problems: string[];
  /** Worst cases seen (slowest recovery, most retries of one event...), for docs/faults.md. */
  worst: Record<string, Figure>;
  durationMs: number;
}

export interface Scenario {
  id: number;
  name: string;
  /** Upper bound on the scenario's wall time at a scale (the runner gives up after it). */
  budgetMs(scale: Scale): number;
  run(scale: Scale, context: ScenarioContext): Promise<Omit<ScenarioResult, 'id' | 'name' | 'durationMs'>>;
}

export interface ScenarioContext {
  log: (line: string) => void;
  /** Aborted when the scenario runs out of budget: its world kills its processes at once. */
  signal: AbortSignal;
}

/** Percentile of a list of numbers (nearest rank); 0 for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/** Milliseconds as seconds with one decimal, e.g. "2.4 s". */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Adds a problem when a condition does not hold; returns the condition. */
export function check(problems: string[], ok: boolean, problem: string): boolean {
  if (!ok) problems.push(problem);
  return ok;
}
