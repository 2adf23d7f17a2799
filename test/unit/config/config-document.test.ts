import { describe, expect, it } from 'vitest';
import { locatePath, parseConfigDocument } from '../../../src/config/config-document.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'dup.yaml', env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  throw new Error('the text loaded, but it should not have');
}

describe('duplicate keys, found in one pass (regression: yaml compared every key with every other)', () => {
  it.each([
    [
      'block mapping',
      'a: 1\nb: 2\na: 3\n',
      ['dup.yaml:3:1: duplicate key "a": each key may appear once per mapping'],
    ],
    [
      'flow mapping',
      'x: { a: 1, a: 2 }\n',
      ['dup.yaml:1:12: duplicate key "a": each key may appear once per mapping'],
    ],
    [
      'three times',
      'a: 1\na: 2\na: 3\n',
      [
        'dup.yaml:2:1: duplicate key "a": each key may appear once per mapping',
        'dup.yaml:3:1: duplicate key "a": each key may appear once per mapping',
      ],
    ],
    [
      'in a mapping inside a list',
      'x:\n  - { k: 1 }\n  - { k: 1, k: 2 }\n',
      ['dup.yaml:3:13: duplicate key "k": each key may appear once per mapping'],
    ],
    [
      'a number and a string that load as the same key',
      'x:\n  1: a\n  "1": b\n',
      ['dup.yaml:3:3: duplicate key "1": each key may appear once per mapping'],
    ],
    [
      'null and the empty string',
      'x:\n  ~: a\n  "": b\n',
      ['dup.yaml:3:3: duplicate key "": each key may appear once per mapping'],
    ],
    [
      'beside a syntax error (both reported)',
      'a: 1\na: 2\nb: [ unclosed\n',
      [
        'dup.yaml:2:1: duplicate key "a": each key may appear once per mapping',
        'dup.yaml:4:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ],
    ],
  ])('%s', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });

  it('keeps a YAML parse error as the cause when only duplicate keys are wrong', () => {
    try {
      parseConfigText('a: 1\na: 2\n', { fileName: 'dup.yaml', env: {} });
      throw new Error('loaded');
    } catch (error) {
      expect((error as ConfigError).cause).toMatchObject({ name: 'YAMLParseError', code: 'DUPLICATE_KEY' });
    }
  });

  it('reads a mapping of 20,000 keys in bounded time (it took about 7 s)', () => {
    const text = `${HEAD}${Array.from({ length: 20_000 }, (_, i) => `k${i}: ${i}`).join('\n')}\n`;
    const started = cpuMs();
    const parsed = parseConfigDocument(text, 'big.yaml');
    expect(parsed.issues).toEqual([]);
    expect(cpuMs() - started).toBeLessThan(3_000);
  });
});

describe('locatePath (regression: a linear search per issue made thousands of issues quadratic)', () => {
  it('finds the first and the last of 20,000 keys where they are written', () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `k${i}: ${i}`);
    const parsed = parseConfigDocument(`${lines.join('\n')}\n`, 'big.yaml');
    const document = parsed.document;
    if (!document) throw new Error(JSON.stringify(parsed.issues));
    expect(locatePath(document, ['k19999'])).toEqual({ line: 20_000, column: 9 });
    expect(locatePath(document, ['k19999'], { atKey: true })).toEqual({ line: 20_000, column: 1 });
    expect(locatePath(document, ['k0'])).toEqual({ line: 1, column: 5 });
    expect(locatePath(document, ['missing'])).toEqual({ line: 1, column: 1 });
  });

  it('reports 8,000 unknown keys with their positions in bounded time (it took about 40 s)', () => {
    const text = `${HEAD}${Array.from({ length: 8_000 }, (_, i) => `unknown_${i}: ${i}`).join('\n')}\n`;
    const started = cpuMs();
    const issues = issuesOf(text);
    expect(cpuMs() - started).toBeLessThan(3_000);
    expect(issues).toHaveLength(8_000);
    expect(issues[7_999]).toMatch(/^dup\.yaml:8005:1: unknown_7999: unknown key "unknown_7999"/);
  });
});
