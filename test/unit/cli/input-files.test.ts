import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-in-process.js';

/**
 * Files the CLI reads (issue 30, item 6): a byte-order mark is skipped, bytes that are not UTF-8
 * are named with file:line:column, and a rule-test file that cannot be run is described as a test
 * file (not as a config) at the line of the problem.
 */

const dir = mkdtempSync(join(tmpdir(), 'input-files-'));
const CONFIG = resolve('config/bridge.example.yaml');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** `text` with the bytes of `latin1` (one byte a character) in place of `marker`. */
function withLatin1(text: string, marker: string, latin1: string): Buffer {
  const [before, after] = text.split(marker) as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(latin1, 'latin1'), Buffer.from(after)]);
}

const EVENT = readFileSync('config/examples/event-catalog.json', 'utf8');
const EVENTS = readFileSync('config/examples/recorded-events.jsonl', 'utf8');
const TESTS = readFileSync('config/bridge.example.rules-test.yaml', 'utf8')
  .replace('config: bridge.example.yaml', `config: ${CONFIG}`)
  .replaceAll('../test/fixtures/', `${resolve('test/fixtures')}/`);
const EXPLAIN = ['explain', '--config', CONFIG, '--now', '2026-11-23T03:20:05Z', '--event'];
const BACKTEST = ['backtest', '--config', CONFIG, '--from'];

describe('a byte-order mark at the start of a file is skipped', () => {
  it.each([
    [
      'explain --event (JSON)',
      () => [...EXPLAIN, file('bom-event.json', Buffer.concat([BOM, Buffer.from(EVENT)]))],
    ],
    [
      'backtest --from (JSON Lines)',
      () => [...BACKTEST, file('bom.jsonl', Buffer.concat([BOM, Buffer.from(EVENTS)]))],
    ],
    [
      'validate (config YAML)',
      () => ['validate', '--allow-missing-env', file('bom.yaml', Buffer.concat([BOM, readFileSync(CONFIG)]))],
    ],
    [
      'test (rule-test YAML)',
      () => ['test', file('bom.rules-test.yaml', Buffer.concat([BOM, Buffer.from(TESTS)]))],
    ],
  ])('%s', async (_what, args) => {
    const { code, stderr } = await cli(args());
    expect(stderr).not.toContain('\ufeff');
    expect(stderr).not.toMatch(/not valid JSON|not JSON/);
    expect(code).toBe(0);
  });
});

describe('bytes that are not UTF-8 are named with the file, line and column', () => {
  it.each([
    [
      'explain --event',
      () => [...EXPLAIN, file('latin1-event.json', withLatin1(EVENT, 'katalog', 'katalög'))],
      /latin1-event\.json:\d+:\d+: byte 0xF6 is not UTF-8: save the file as UTF-8/,
    ],
    [
      'backtest --from',
      () => [
        ...BACKTEST,
        file('latin1.jsonl', withLatin1(EVENTS, 'minta katalog dong', 'minta katalög dong')),
      ],
      /latin1\.jsonl:4:\d+: byte 0xF6 is not UTF-8/,
    ],
    [
      'validate',
      () => [
        'validate',
        '--allow-missing-env',
        file('latin1.yaml', withLatin1(readFileSync(CONFIG, 'utf8'), 'Terima kasih', 'Terimä kasih')),
      ],
      /latin1\.yaml:\d+:\d+: byte 0xE4 is not UTF-8/,
    ],
  ])('%s', async (_what, args, message) => {
    const { code, stderr } = await cli(args());
    expect(stderr).toMatch(message);
    expect(stderr).not.toContain('\ufffd');
    expect(code).toBe(1);
  });

  it('validate: in a file of businesses_dir', async () => {
    const businesses = join(dir, 'businesses');
    mkdirSync(businesses, { recursive: true });
    const top = readFileSync('test/fixtures/config/businesses/bridge.yaml', 'utf8').replace(
      'businesses_dir: dir',
      'businesses_dir: businesses',
    );
    const toko = readFileSync('test/fixtures/config/businesses/dir/toko-c.yaml', 'utf8');
    writeFileSync(join(businesses, 'toko-c.yaml'), withLatin1(toko, 'api.toko-c', 'api.tokö-c'));
    const { code, stderr } = await cli(['validate', file('agency.yaml', top)]);
    expect(stderr).toContain(`${join(businesses, 'toko-c.yaml')}:3:28: byte 0xF6 is not UTF-8`);
    expect(code).toBe(1);
  });

  it('test: in the test file and in an event_file', async () => {
    const tests = file('latin1.rules-test.yaml', withLatin1(TESTS, 'Halo, masih buka?', 'Halö, masih buka?'));
    const text = readFileSync(tests, 'latin1').split('\n');
    const line = text.findIndex((l) => l.includes('Halö')) + 1;
    const column = (text[line - 1] ?? '').indexOf('ö') + 1;
    const { code, stdout } = await cli(['test', tests]);
    expect(stdout).toContain(`${tests}:${line}:${column}: byte 0xF6 is not UTF-8`);
    expect(code).toBe(1);

    const event = file('latin1-event-file.json', withLatin1(EVENT, 'katalog', 'katalög'));
    const withEventFile = file(
      'event-file.rules-test.yaml',
      `config: ${CONFIG}\ncases:\n  - name: x\n    event_file: ${event}\n    expect: { no_action: true }\n`,
    );
    const run = await cli(['test', withEventFile]);
    expect(run.stdout).toMatch(/event_file .*latin1-event-file\.json:\d+:\d+: byte 0xF6 is not UTF-8/);
    expect(run.code).toBe(1);
  });
});

describe('a rule-test file that cannot be run is described as a test file', () => {
  it.each([
    ['empty', '', ':1:1: the test file is empty: give config: and cases:'],
    [
      'binary',
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]),
      ':1:8: a NUL byte: this is a binary file, not text',
    ],
    ['a list', '- name: x\n', ':1:1: a test file is a mapping (config:, now:, cases:), got a list'],
    [
      'two documents',
      `config: ${CONFIG}\ncases: []\n---\ncases: []\n`,
      ':3:1: a second YAML document starts here: the file must be one document',
    ],
    [
      'an unknown top-level key',
      `config: ${CONFIG}\ncasez: []\n`,
      ':2:1: unknown key "casez"; did you mean "cases"?',
    ],
    [
      'a now on a day that does not exist',
      `config: ${CONFIG}\nnow: 2026-02-30T00:00:00Z\ncases: []\n`,
      ':2:6: now: expected an ISO-8601 instant with a zone, on a day that exists (e.g. 2026-11-23T03:15:00Z)',
    ],
    [
      'an unknown key in expect',
      `config: ${CONFIG}\ncases:\n  - name: x\n    event: {}\n    expect: { no_action: true, not_mached: [] }\n`,
      ':5:32: cases.0.expect: unknown key "not_mached"; did you mean "not_matched"?',
    ],
  ])('%s', async (what, content, where) => {
    const path = file(`${what.replace(/\W+/g, '-')}.rules-test.yaml`, content);
    const { code, stdout } = await cli(['test', path]);
    expect(stdout).toContain(`${path}${where}`);
    expect(stdout).not.toContain('config/bridge.example.yaml\n');
    expect(stdout).not.toMatch(/the config (file is empty|must be a mapping)/);
    expect(code).toBe(1);
  });

  it.each([
    ['alone', []],
    ['with test files', ['config/bridge.example.rules-test.yaml']],
  ])('test --config of a file that does not exist says "not found" (%s)', async (_what, files) => {
    const { code, stdout, stderr } = await cli(['test', '--config', join(dir, 'nope.yaml'), ...files]);
    expect(stderr).toBe(`convo-bridge: --config ${join(dir, 'nope.yaml')}: not found: check the path\n`);
    expect(stdout).toBe('');
    expect(code).toBe(1);
  });
});
