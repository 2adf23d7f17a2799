import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { ConfigError } from '../../../src/config/config-error.js';
import type { LoadedConfig } from '../../../src/config/load-config.js';
import { type ConfigWatcher, watchConfig } from '../../../src/config/watch-config.js';

const config = (rules: string) => `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ "\${WEBHOOK_SECRET}" ]
rules:
${rules}`;
const ONE_RULE = config('  - { name: first, on: message_in, then: [ { need_human: true } ] }\n');
const TWO_RULES = `${ONE_RULE}  - { name: second, on: ai_reply, then: [ { note: hi } ] }\n`;
const BROKEN = `${TWO_RULES}  - { name: third, on: message_in, then: [ { forward: nowhere } ] }\n`;

describe('watchConfig', () => {
  let dir: string;
  let file: string;
  let watcher: ConfigWatcher | undefined;
  let reloads: LoadedConfig[];
  let errors: ConfigError[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-watch-'));
    file = join(dir, 'bridge.yaml');
    await writeFile(file, ONE_RULE);
    reloads = [];
    errors = [];
    watcher = watchConfig(file, {
      env: { WEBHOOK_SECRET: 'w' },
      debounceMs: 50,
      onReload: (loaded) => reloads.push(loaded),
      onError: (error) => errors.push(error),
    });
  });

  afterEach(async () => {
    watcher?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const names = (loaded: LoadedConfig | undefined) => loaded?.config.rules.map((r) => r.name);

  it('reloads a valid change, rejects an invalid one with reasons, and recovers', async () => {
    await writeFile(file, TWO_RULES);
    await waitFor(() => reloads.length === 1, { timeoutMs: 5_000, what: 'the first reload' });
    expect(names(reloads[0])).toEqual(['first', 'second']);

    await writeFile(file, BROKEN);
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000, what: 'the invalid change to be reported' });
    expect(errors[0]?.issues.map((i) => `${i.line}:${i.column}: ${i.message}`)).toEqual([
      '9:55: rules.2.then.0.forward: unknown destination "nowhere": define it under destinations:',
    ]);
    expect(reloads).toHaveLength(1);

    // Editors save by writing a new file and renaming it over the old one.
    const temp = join(dir, '.bridge.yaml.swp');
    await writeFile(temp, config('  - { name: third, on: message_in, then: [ { note: ok } ] }\n'));
    await rename(temp, file);
    await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, what: 'the reload after the rename' });
    expect(names(reloads[1])).toEqual(['third']);
    expect(errors).toHaveLength(1);
  });

  it('reloads on SIGHUP and ignores a save that changes nothing', async () => {
    await writeFile(file, ONE_RULE);
    process.emit('SIGHUP', 'SIGHUP');
    // Same content as at start: no reload. Then a real change arrives through SIGHUP too.
    await writeFile(join(dir, 'other.yaml'), 'not watched');
    await new Promise((resolve) => setTimeout(resolve, 0));
    await writeFile(file, TWO_RULES);
    process.emit('SIGHUP', 'SIGHUP');
    await waitFor(() => reloads.length >= 1, { timeoutMs: 5_000, what: 'the reload after SIGHUP' });
    expect(reloads.map(names)).toEqual([['first', 'second']]);
  });

  it('stops after close', async () => {
    watcher?.close();
    watcher?.close();
    await writeFile(file, TWO_RULES);
    process.emit('SIGHUP', 'SIGHUP');
    // A control watcher proves that change events were delivered in the meantime.
    const seen: LoadedConfig[] = [];
    const control = watchConfig(file, {
      env: { WEBHOOK_SECRET: 'w' },
      debounceMs: 50,
      sighup: false,
      onReload: (loaded) => seen.push(loaded),
      onError: () => undefined,
    });
    try {
      await writeFile(file, `${TWO_RULES}# touched\n`);
      await waitFor(() => seen.length === 1, { timeoutMs: 5_000, what: 'the control watcher to reload' });
      expect(reloads).toEqual([]);
    } finally {
      control.close();
    }
  });
});
