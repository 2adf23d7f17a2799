import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('vitest.config.ts', () => {
  it('runs the unit and integration projects together on a machine of 4 cores', () => {
    // vitest refuses projects of different maxWorkers in one group; on 2 cores both resolve to 1,
    // so only a machine with more cores (simulated here) shows it.
    const preload = join(process.cwd(), 'test/support/four-cores.mjs');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST')));
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        preload,
        join(process.cwd(), 'node_modules/vitest/vitest.mjs'),
        'run',
        'test/unit/base/duration.test.ts',
        'test/integration/redis/redis-urls.test.ts',
      ],
      { env: { ...env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' }, encoding: 'utf8', timeout: 120_000 },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output).not.toMatch(/different 'maxWorkers'/);
    expect(run.status, output).toBe(0);
    expect(output).toMatch(/Test Files +2 passed/);
  });
});
