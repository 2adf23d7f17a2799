import { FaultSuiteError } from './fault-suite-error.js';
import type { Scale } from './scenario.js';

/** Scenarios of the suite, numbered from 1 (test/faults/run-faults.ts SCENARIOS). */
export const SCENARIO_COUNT = 8;

export interface SuiteArgs {
  scale: Scale;
  /** Scenario ids to run (all when empty). */
  only: number[];
}

/**
 * Reads the suite's arguments: `--reduced` / `--full` (or FAULTS_SCALE=reduced|full; full by
 * default) and `--only 1,3` (or FAULTS_ONLY) to run some scenarios while working on them.
 */
export function parseSuiteArgs(argv: readonly string[], env: NodeJS.ProcessEnv): SuiteArgs {
  let scale: Scale | undefined;
  const fromEnv = env.FAULTS_SCALE?.trim();
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv !== 'full' && fromEnv !== 'reduced') {
      throw new FaultSuiteError(
        'BAD_ARGS',
        `FAULTS_SCALE must be "full" or "reduced", got ${JSON.stringify(fromEnv)}`,
      );
    }
    scale = fromEnv;
  }
  let onlyText = env.FAULTS_ONLY?.trim() || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--reduced') scale = 'reduced';
    else if (arg === '--full') scale = 'full';
    else if (arg === '--only') {
      onlyText = argv[i + 1];
      i += 1;
      if (onlyText === undefined) {
        throw new FaultSuiteError('BAD_ARGS', '--only needs scenario numbers, e.g. --only 1,3');
      }
    } else {
      throw new FaultSuiteError(
        'BAD_ARGS',
        `unknown argument ${JSON.stringify(arg)}: use --reduced, --full or --only 1,3`,
      );
    }
  }
  const only =
    onlyText === undefined
      ? []
      : onlyText.split(',').map((part) => {
          const n = Number(part.trim());
          if (!Number.isInteger(n) || n < 1 || n > SCENARIO_COUNT) {
            throw new FaultSuiteError(
              'BAD_ARGS',
              `--only takes scenario numbers from 1 to ${SCENARIO_COUNT} separated by commas, got ${JSON.stringify(onlyText)}`,
            );
          }
          return n;
        });
  return { scale: scale ?? 'full', only };
}
