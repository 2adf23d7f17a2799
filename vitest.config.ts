import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files that run at once. `npm test` runs them one at a time (TEST_LANES unset): timing-bounded
 * CLI tests (an exit within 10 s, a bridge ready within 15 s) still fail when four files share two
 * cores. `npm run test:lanes` sets TEST_LANES (4, or one per core beyond 4): most integration files
 * wait (on Redis, HTTP on loopback, timers, child processes) far more than they compute, so even 2
 * cores keep 4 of them busy. Every project of one group gets the same number: vitest refuses a
 * group whose projects differ in `maxWorkers`.
 */
const LANES = process.env.TEST_LANES ? Math.max(Number(process.env.TEST_LANES), availableParallelism()) : 1;

// Unit tests (pure code) and integration tests (real Redis and real HTTP on loopback) run in one
// group, LANES files at a time. Each integration file owns its queue names and key prefixes (or its
// own redis-server when it reads server-wide state such as INFO or DBSIZE), so files can share the
// run's Redis.
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          maxWorkers: LANES,
          sequence: { groupOrder: 1 },
          // As for integration below: a worker takes file after file, importing the modules once
          // (measured on 2 loaded cores: 47 CPU-s for the unit files instead of 156 with a fresh
          // process per file). The unit files keep no state between files (no module mocks; the one
          // fake clock and the environment variables they set are restored by the file).
          isolate: false,
          // Files share the cores with the other lanes: a property test of many runs, or a bound
          // checked in CPU time (test/support/cpu-time.ts), may take several seconds of wall time.
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          maxWorkers: LANES,
          sequence: { groupOrder: 1 },
          // A worker takes file after file rather than a fresh process per file: the project's
          // modules (ioredis, BullMQ, got, Express, zod) are imported once per worker instead of
          // once per file. Every file closes what it starts (servers, Redis processes, connections).
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The end-to-end suite's main cases (rules, order, exactly once, timers, dead letters) on a
        // real Redis Cluster of 3 primaries with redis.shards: 6, same test files, LANES at a time
        // (each world has its own key prefix). Cases a cluster cannot change are skipped here
        // (itOffCluster in test/support/e2e-world.ts).
        extends: true,
        test: {
          name: 'cluster',
          include: [
            'test/integration/e2e/example-rules.e2e.test.ts',
            'test/integration/e2e/resilience.e2e.test.ts',
            'test/integration/e2e/timers-window-redelivery.e2e.test.ts',
            'test/integration/e2e/dead-letters-auth-forms.e2e.test.ts',
            'test/integration/e2e/forget.e2e.test.ts',
          ],
          globalSetup: ['test/support/cluster-setup.ts'],
          // After the other projects, not beside them: its six redis-server processes and their
          // ports raced the integration tests' free-port picks (EADDRINUSE once in a CI run).
          sequence: { groupOrder: 2 },
          maxWorkers: LANES,
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Property-based hostile input (test/hostile): one file at a time, so that timings and heap
        // figures are not disturbed by a sibling file; --expose-gc for the receiver's heap bound.
        // HOSTILE_SCALE sets the counts (npm test: small; npm run test:hostile: the full 100,000+).
        extends: true,
        test: {
          name: 'hostile',
          include: ['test/hostile/**/*.test.ts'],
          fileParallelism: false,
          execArgv: ['--expose-gc'],
          testTimeout: 600_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
