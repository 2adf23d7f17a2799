import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-in-process.js';

/** Issue 27: a backtest says which redactions the recorded events had, and what that means for it. */
const CONFIG = resolve('config/bridge.example.yaml');
const LINES = readFileSync('config/examples/recorded-events.jsonl', 'utf8').trim().split('\n');
const dir = mkdtempSync(join(tmpdir(), 'redacted-recordings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The example recording with `redacted` set on its first `n` lines. */
function recording(name: string, redacted: string[], n: number): string {
  const path = join(dir, name);
  const lines = LINES.map((line, i) => (i < n ? JSON.stringify({ ...JSON.parse(line), redacted }) : line));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('backtest over redacted recordings', () => {
  it.each([
    [
      'texts',
      ['texts'],
      'warning: 3 event(s) were recorded with record.redact.texts: keyword and regex conditions cannot be judged on them\n',
    ],
    [
      'personal kinds',
      ['phones', 'cards', 'national_ids'],
      'warning: 3 event(s) were recorded with record.redact.phones, record.redact.cards, record.redact.national_ids: what those masked reads as "#" in their texts and names, so conditions on it (a regex for digits or an address) may judge differently\n',
    ],
  ])('%s: a warning naming them', async (name, redacted, warning) => {
    const { code, stderr } = await cli([
      'backtest',
      '--config',
      CONFIG,
      '--from',
      recording(`${name}.jsonl`, redacted, 3),
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain(warning);
  });

  it('none: no warning', async () => {
    const { code, stderr } = await cli([
      'backtest',
      '--config',
      CONFIG,
      '--from',
      recording('none.jsonl', [], 0),
    ]);
    expect(code).toBe(0);
    expect(stderr).not.toContain('warning');
  });

  it('an unknown redaction in a line is a clear error, not a crash', async () => {
    const { code, stderr } = await cli([
      'backtest',
      '--config',
      CONFIG,
      '--from',
      recording('bad.jsonl', ['names'], 1),
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/bad\.jsonl:1/);
    expect(stderr).toContain('redacted');
  });
});
