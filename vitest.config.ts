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
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
