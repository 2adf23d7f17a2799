import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
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
  let said: string[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-watch-'));
    file = join(dir, 'bridge.yaml');
    await writeFile(file, ONE_RULE);
    reloads = [];
    errors = [];
    said = [];
    watcher = watchConfig(file, {
      env: { WEBHOOK_SECRET: 'w' },
      debounceMs: 50,
      logger: { info: (_obj, msg) => said.push(msg), warn: (_obj, msg) => said.push(msg) },
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
    // Same content as at start: the check runs (and says so) but nothing is reloaded.
    await writeFile(file, ONE_RULE);
    process.emit('SIGHUP', 'SIGHUP');
    await waitFor(() => said.includes('config unchanged; nothing reloaded'), {
      timeoutMs: 5_000,
      what: 'the check after the save that changed nothing',
    });
    await writeFile(join(dir, 'other.yaml'), 'not watched');
    expect(reloads).toEqual([]);
    // Then a real change arrives through SIGHUP too.
    await writeFile(file, TWO_RULES);
    process.emit('SIGHUP', 'SIGHUP');
    await waitFor(() => reloads.length >= 1, { timeoutMs: 5_000, what: 'the reload after SIGHUP' });
    expect(reloads.map(names)).toEqual([['first', 'second']]);
    expect(said.filter((line) => line === 'config reloaded')).toHaveLength(1);
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

describe('watchConfig with businesses_dir', () => {
  let dir: string;
  let watcher: ConfigWatcher | undefined;
  let reloads: LoadedConfig[];
  let errors: ConfigError[];

  const TOP = `platform: { form: current }
businesses_dir: businesses
rules:
  - { name: shared, on: message_in, then: [ { need_human: true } ] }
`;
  const business = (name: string, extra = '') =>
    `platform: { base_url: https://${name}.example.com, auth: { business_id: ${name}, secret: secret-${name} } }\n${extra}`;
  const ids = (loaded: LoadedConfig | undefined) => loaded?.businesses.map((b) => b.id);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-watch-businesses-'));
    await mkdir(join(dir, 'businesses'));
    await writeFile(join(dir, 'bridge.yaml'), TOP);
    await writeFile(join(dir, 'businesses', 'toko-a.yaml'), business('toko-a'));
    reloads = [];
    errors = [];
    watcher = watchConfig(join(dir, 'bridge.yaml'), {
      env: {},
      debounceMs: 50,
      onReload: (loaded) => reloads.push(loaded),
      onError: (error) => errors.push(error),
    });
  });

  afterEach(async () => {
    watcher?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reloads when a business file is added, changed or removed, and rejects an invalid one', async () => {
    await writeFile(join(dir, 'businesses', 'toko-b.yaml'), business('toko-b'));
    await waitFor(() => reloads.length === 1, { timeoutMs: 5_000, what: 'the reload after adding toko-b' });
    expect(ids(reloads[0])).toEqual(['toko-a', 'toko-b']);

    await writeFile(
      join(dir, 'businesses', 'toko-b.yaml'),
      business('toko-b', 'rules: [ { name: own, on: message_in, then: [ { note: hi } ] } ]\n'),
    );
    await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, what: 'the reload after changing toko-b' });
    expect(reloads[1]?.businesses[1]?.config.rules.map((r) => r.name)).toEqual(['own']);

    await rm(join(dir, 'businesses', 'toko-b.yaml'));
    await waitFor(() => reloads.length === 3, { timeoutMs: 5_000, what: 'the reload after removing toko-b' });
    expect(ids(reloads[2])).toEqual(['toko-a']);

    await writeFile(join(dir, 'businesses', 'toko-c.yaml'), business('toko-c', 'redis: { db: 1 }\n'));
    await waitFor(() => errors.length === 1, {
      timeoutMs: 5_000,
      what: 'the invalid business to be reported',
    });
    expect(
      errors[0]?.issues.map((i) => `${i.file.slice(dir.length + 1)}:${i.line}:${i.column}: ${i.message}`),
    ).toEqual([
      'businesses/toko-c.yaml:2:1: business "toko-c": redis is shared by all businesses and belongs at the top level: move it there',
    ]);
    expect(reloads).toHaveLength(3);
  });

  it('ignores a business file saved unchanged, and reloads on SIGHUP when one changed', async () => {
    await writeFile(join(dir, 'businesses', 'toko-a.yaml'), business('toko-a'));
    process.emit('SIGHUP', 'SIGHUP');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reloads).toEqual([]);
    await writeFile(join(dir, 'businesses', 'toko-a.yaml'), business('toko-a', 'timezone: Asia/Makassar\n'));
    process.emit('SIGHUP', 'SIGHUP');
    await waitFor(() => reloads.length >= 1, { timeoutMs: 5_000, what: 'the reload after SIGHUP' });
    expect(reloads.map((loaded) => loaded.businesses[0]?.config.timezone)).toEqual(['Asia/Makassar']);
    expect(errors).toEqual([]);
  });

  it('follows the config to another businesses_dir', async () => {
    await mkdir(join(dir, 'other'));
    await writeFile(join(dir, 'other', 'toko-z.yaml'), business('toko-z'));
    await writeFile(
      join(dir, 'bridge.yaml'),
      TOP.replace('businesses_dir: businesses', 'businesses_dir: other'),
    );
    await waitFor(() => reloads.length === 1, { timeoutMs: 5_000, what: 'the reload of the new directory' });
    expect(ids(reloads[0])).toEqual(['toko-z']);
    await writeFile(join(dir, 'other', 'toko-y.yaml'), business('toko-y'));
    await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, what: 'a change in the new directory' });
    expect(ids(reloads[1])).toEqual(['toko-y', 'toko-z']);
    // The old directory is no longer watched.
    await writeFile(join(dir, 'businesses', 'toko-x.yaml'), business('toko-x'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reloads).toHaveLength(2);
  });
});

describe('watchConfig with shadow rules (issue 28)', () => {
  let dir: string;
  let watcher: ConfigWatcher | undefined;
  let reloads: LoadedConfig[];
  let errors: ConfigError[];
  let said: string[];

  const candidate = (...names: string[]) =>
    `rules:\n${names.map((name) => `  - { name: ${name}, on: message_in, then: [ { need_human: true } ] }\n`).join('')}`;
  const shadowNames = (loaded: LoadedConfig | undefined) =>
    loaded?.businesses[0]?.shadow?.rules.rules.map((rule) => rule.name);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-watch-shadow-'));
    await mkdir(join(dir, 'shadow'));
    await writeFile(join(dir, 'bridge.yaml'), `${ONE_RULE}shadow: { rules: shadow/candidate.yaml }\n`);
    await writeFile(join(dir, 'shadow', 'candidate.yaml'), candidate('a'));
    reloads = [];
    errors = [];
    said = [];
    watcher = watchConfig(join(dir, 'bridge.yaml'), {
      env: { WEBHOOK_SECRET: 'w' },
      debounceMs: 50,
      shadowFiles: [join(dir, 'shadow', 'candidate.yaml')],
      logger: { info: (_obj, msg) => said.push(msg), warn: (_obj, msg) => said.push(msg) },
      onReload: (loaded) => reloads.push(loaded),
      onError: (error) => errors.push(error),
    });
  });

  afterEach(async () => {
    watcher?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reloads when the candidate file changes, reports an invalid or missing one, and recovers', async () => {
    const file = join(dir, 'shadow', 'candidate.yaml');
    await writeFile(file, candidate('a', 'b'));
    await waitFor(() => reloads.length === 1, {
      timeoutMs: 5_000,
      what: 'the reload of the changed candidate',
    });
    expect(shadowNames(reloads[0])).toEqual(['a', 'b']);
    expect(reloads[0]?.shadowFiles).toEqual([file]);

    // Saved unchanged: checked on SIGHUP, nothing reloaded.
    await writeFile(file, candidate('a', 'b'));
    process.emit('SIGHUP', 'SIGHUP');
    await waitFor(() => said.includes('config unchanged; nothing reloaded'), {
      timeoutMs: 5_000,
      what: 'the check after the unchanged save',
    });
    expect(reloads).toHaveLength(1);

    await writeFile(file, `${candidate('a')}  - { name: c, on: mesage_in, then: [] }\n`);
    await waitFor(() => errors.length === 1, {
      timeoutMs: 5_000,
      what: 'the invalid candidate to be reported',
    });
    expect(new Set(errors[0]?.issues.map((i) => `${i.file}:${i.line}`))).toEqual(new Set([`${file}:3`]));

    await rm(file);
    await waitFor(() => errors.length === 2, {
      timeoutMs: 5_000,
      what: 'the missing candidate to be reported',
    });
    expect(errors[1]?.message).toContain('does not exist');
    await writeFile(file, candidate('z'));
    await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, what: 'the reload once the file is back' });
    expect(shadowNames(reloads[1])).toEqual(['z']);
  });

  it('follows the config to another candidate file, and turns shadow rules off when shadow: goes', async () => {
    const other = join(dir, 'other.yaml');
    await writeFile(other, candidate('o'));
    await writeFile(join(dir, 'bridge.yaml'), `${ONE_RULE}shadow: { rules: other.yaml }\n`);
    await waitFor(() => reloads.length === 1, { timeoutMs: 5_000, what: 'the reload naming another file' });
    expect(shadowNames(reloads[0])).toEqual(['o']);
    await writeFile(other, candidate('o', 'p'));
    await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, what: 'a change of the other file' });
    expect(shadowNames(reloads[1])).toEqual(['o', 'p']);
    await writeFile(join(dir, 'bridge.yaml'), ONE_RULE);
    await waitFor(() => reloads.length === 3, { timeoutMs: 5_000, what: 'the reload without shadow:' });
    expect(reloads[2]?.businesses[0]?.shadow).toBeUndefined();
    expect(reloads[2]?.shadowFiles).toEqual([]);
    expect(errors).toEqual([]);
  });
});
