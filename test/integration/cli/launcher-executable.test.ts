import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * `npx convo-bridge` runs the bin file itself (its `#!/usr/bin/env -S node ...` line), so the built
 * file must be executable: npm makes it so only when it links the package, and a later build
 * rewrote it without the bit ("sh: convo-bridge: Permission denied" in a clone whose npx cache
 * entry already existed). `npm run build` sets it.
 */
describe('the built launcher', () => {
  const launcher = new URL('../../../dist/cli.js', import.meta.url);

  it('is executable', () => {
    expect(statSync(launcher).mode & 0o111).toBe(0o111);
  });

  it('runs as a program, with the V8 flags of its first line', () => {
    const run = spawnSync(launcher.pathname, ['--version'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
