import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The bin starts node with the V8 heap settings measured in docs/performance.md (issue 11): a
 * bounded young generation and old space keep the RSS near 135 MB under load, and an explicit heap
 * growing factor of 1.5 keeps the old-space bound from collecting every 200 ms (any
 * --max-old-space-size lowers V8's own factor). The Docker image passes the same flags; the two
 * must not drift apart.
 */
describe('the convo-bridge launcher', () => {
  const shebang = readFileSync(new URL('../../../src/cli.ts', import.meta.url), 'utf8').split('\n', 1)[0];
  const flags = /^#!\/usr\/bin\/env -S node (.+)$/.exec(shebang ?? '')?.[1]?.split(' ') ?? [];

  it('starts node with bounded heap settings', () => {
    expect(flags).toEqual([
      '--max-old-space-size=160',
      '--max-semi-space-size=8',
      '--heap-growing-percent=50',
    ]);
  });

  it('the Docker image starts node with the same flags', () => {
    const dockerfile = readFileSync(new URL('../../../Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toContain(
      `ENTRYPOINT ["node", ${flags.map((f) => `"${f}"`).join(', ')}, "dist/cli.js"]`,
    );
  });
});
