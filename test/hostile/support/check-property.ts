import fc from 'fast-check';
import type { TaskMeta } from 'vitest';
import { cpuMs } from '../../support/cpu-time.js';
import { seedOption } from './scale.js';

/** One row of the hostile table: a property, how many inputs it was given, what broke, how long. */
export interface PropertyRecord {
  property: string;
  runs: number;
  /** Inputs that broke the property (fast-check stops at the first and shrinks it). */
  failures: number;
  ms: number;
  /** The slowest single input, so a "bounded per input" claim can be read off the table. */
  slowestMs: number;
  /** Which clock `slowestMs` is on. */
  clock?: 'wall' | 'cpu';
}

declare module 'vitest' {
  interface TaskMeta {
    hostile?: PropertyRecord[];
  }
}

export interface CheckOptions {
  runs: number;
  /** Fails the property when one input takes longer than this (measured, synchronous code cannot be cut off). */
  maxMsPerInput?: number;
  /**
   * What `maxMsPerInput` and the slowest input are measured in: wall-clock time (default), or this
   * process's CPU time, which other processes on a busy machine do not inflate (synchronous code).
   */
  clock?: 'wall' | 'cpu';
  /** Fails the whole property (not only one input) when the runs take longer than this. */
  maxTotalMs?: number;
}

/**
 * Runs `predicate` on `runs` generated inputs and records the counts on the test's meta, where
 * the table reporter (table-reporter.ts) finds them. The predicate throws (an `expect`) to reject
 * an input; fast-check then shrinks it to a small counterexample and the test fails with it.
 */
export async function checkProperty<T>(
  task: { meta: TaskMeta },
  property: string,
  arbitrary: fc.Arbitrary<T>,
  /**
   * Rejects an input by throwing; may return the milliseconds the code under test took, when the
   * checks around it should not count (otherwise the whole call is timed).
   */
  predicate: (value: T) => undefined | number | Promise<undefined | number>,
  options: CheckOptions,
): Promise<void> {
  let slowestMs = 0;
  const clock = options.clock === 'cpu' ? cpuMs : () => performance.now();
  const timed = async (value: T) => {
    const started = clock();
    const measured = await predicate(value);
    const ms = typeof measured === 'number' ? measured : clock() - started;
    slowestMs = Math.max(slowestMs, ms);
    if (options.maxMsPerInput !== undefined && ms > options.maxMsPerInput) {
      const what = options.clock === 'cpu' ? 'ms of CPU time' : 'ms';
      throw new Error(`one input took ${ms.toFixed(0)} ${what}, over the bound of ${options.maxMsPerInput}`);
    }
  };
  const started = performance.now();
  const details = await fc.check(fc.asyncProperty(arbitrary, timed), {
    numRuns: options.runs,
    includeErrorInReport: true,
    ...seedOption(),
    ...(options.maxTotalMs === undefined
      ? {}
      : { interruptAfterTimeLimit: options.maxTotalMs, markInterruptAsFailure: true }),
  });
  const record: PropertyRecord = {
    property,
    runs: details.numRuns,
    failures: details.failed ? 1 : 0,
    ms: performance.now() - started,
    slowestMs,
    clock: options.clock ?? 'wall',
  };
  task.meta.hostile = [...(task.meta.hostile ?? []), record];
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? `property "${property}" failed`);
}

/** Records a measurement that is not a fast-check property (timing tables) as a row too. */
export function recordRow(task: { meta: TaskMeta }, record: PropertyRecord): void {
  task.meta.hostile = [...(task.meta.hostile ?? []), record];
}
