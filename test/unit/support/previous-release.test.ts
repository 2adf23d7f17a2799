import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  dependencyDrift,
  PREVIOUS_RELEASE_FILE,
  parsePreviousReleaseFile,
} from '../../support/previous-release.js';

const COMMIT = 'bdf0212562f9dc39763ccc8a978ea0519a50ced8';

describe('parsePreviousReleaseFile (the one place naming the release the upgrade test starts from)', () => {
  it('reads the one commit id among comments and blank lines', () => {
    expect(parsePreviousReleaseFile(`# how to move it forward\n\n${COMMIT}\n`)).toBe(COMMIT);
  });

  it('reads the file in the repository', () => {
    expect(parsePreviousReleaseFile(readFileSync(PREVIOUS_RELEASE_FILE, 'utf8'))).toMatch(/^[0-9a-f]{40}$/);
  });

  it.each([
    ['no commit', '# only a comment\n'],
    ['a short id', 'bdf0212\n'],
    ['a tag', 'v0.1.0\n'],
    ['two commits', `${COMMIT}\n${COMMIT}\n`],
  ])('refuses %s, saying what to put there', (_, text) => {
    expect(() => parsePreviousReleaseFile(text)).toThrow(/exactly one full commit id.*git rev-parse/);
  });
});

const lock = (packages: Record<string, { version: string; dev?: boolean }>) => ({
  lockfileVersion: 3,
  packages: { '': { name: 'convo-bridge', version: '0.1.0' }, ...packages },
});

describe('dependencyDrift (whether the previous release can run on this checkout’s node_modules)', () => {
  it('finds none when every package it ships with has the same version here', () => {
    const previous = lock({ 'node_modules/bullmq': { version: '6.7.0' } });
    const current = lock({
      'node_modules/bullmq': { version: '6.7.0' },
      'node_modules/added-since': { version: '1.0.0' },
    });
    expect(dependencyDrift(previous, current)).toEqual([]);
  });

  it('names a runtime package whose version moved, and one that is gone', () => {
    const previous = lock({
      'node_modules/bullmq': { version: '6.7.0' },
      'node_modules/ioredis/node_modules/debug': { version: '4.3.0' },
      'node_modules/removed-since': { version: '2.0.0' },
    });
    const current = lock({
      'node_modules/bullmq': { version: '6.8.0' },
      'node_modules/ioredis/node_modules/debug': { version: '4.3.0' },
    });
    expect(dependencyDrift(previous, current)).toEqual([
      'bullmq (node_modules/bullmq): 6.7.0 there, 6.8.0 here',
      'removed-since (node_modules/removed-since): 2.0.0 there, absent here',
    ]);
  });

  it('ignores development tools, but not the TypeScript that builds the release', () => {
    const previous = lock({
      'node_modules/vitest': { version: '4.0.0', dev: true },
      'node_modules/typescript': { version: '6.0.3', dev: true },
    });
    const current = lock({
      'node_modules/vitest': { version: '4.1.12', dev: true },
      'node_modules/typescript': { version: '6.1.0', dev: true },
    });
    expect(dependencyDrift(previous, current)).toEqual([
      'typescript (node_modules/typescript): 6.0.3 there, 6.1.0 here',
    ]);
  });

  it('reads a real lockfile (this checkout’s, against itself: no drift)', () => {
    const current = JSON.parse(readFileSync('package-lock.json', 'utf8'));
    expect(dependencyDrift(current, current)).toEqual([]);
  });

  it('refuses something that is not a lockfile', () => {
    expect(() => dependencyDrift({ name: 'x' }, lock({}))).toThrow(
      /the previous release's package-lock.json has no `packages` map.*npm install/,
    );
  });
});
