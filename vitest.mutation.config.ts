import { defineConfig } from 'vitest/config';

// The vitest run that `npm run test:mutation` (Stryker, stryker.config.json) repeats for every
// mutant: the unit tests of the mutated files, which are pure and need no Redis, so no global setup
// starts one. Stryker runs, per mutant, only the tests that reached it.
export default defineConfig({
  test: {
    // Test files are collected again for every mutant; the source modules need not be imported
    // again (Stryker switches mutants at run time), which is most of a run's cost.
    isolate: false,
    // Instrumented code is slower, and the machine may be shared: the 200,000-level nesting test of
    // the body hash took over the default 5 s in one dry run.
    testTimeout: 30_000,
    include: [
      'test/unit/rules/**/*.test.ts',
      'test/unit/receive/**/*.test.ts',
      'test/unit/worker/exactly-once/**/*.test.ts',
      // The compile problems (duplicate names, unknown destinations, when_closed replies) are
      // asserted through the config loader.
      'test/unit/config/load-config.test.ts',
    ],
    exclude: [
      // Property tests draw new random inputs on every run, so a mutant's verdict would depend on
      // the seed and the incremental report could not be trusted; and they and the 100,000-level
      // nesting tests take seconds per mutant (a mutated loop in them runs out of memory rather
      // than out of time). What they check by chance is pinned by examples in the other files.
      'test/unit/receive/normalize/normalize-event.property.test.ts',
      'test/unit/receive/normalize/normalize-field-readers.test.ts',
      'test/unit/receive/normalize/canonical-json-depth.test.ts',
    ],
  },
});
