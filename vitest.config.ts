import { defineConfig } from 'vitest/config';

// Unit tests (pure code) run in parallel. Integration tests use a real Redis and real HTTP on
// loopback and run one file at a time so that timings and process signals stay honest.
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
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          fileParallelism: false,
          // A group of its own: vitest refuses projects with different maxWorkers in one group, and
          // on 3 or more cores the unit project's is more than this one's 1.
          sequence: { groupOrder: 1 },
          // One worker process for all the files, in turn, rather than a fresh one per file: the
          // files still run one at a time, but the project's modules (ioredis, BullMQ, got,
          // Express, zod) are imported once instead of 65 times. Measured in one run each: 132 s of
          // gaps between files with a fresh process per file, 22 s without (CI about 14.7 -> 13
          // min). Every file closes what it starts (servers, Redis processes, connections).
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The end-to-end suite's main cases (rules, order, exactly once, timers, dead letters) on a
        // real Redis Cluster of 3 primaries with redis.shards: 6 (issue 14), same test files.
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
          fileParallelism: false,
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
