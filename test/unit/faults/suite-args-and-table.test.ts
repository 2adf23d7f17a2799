import { describe, expect, it } from 'vitest';
import { formatMarkdownTable, formatTextTable } from '../../faults/support/results-table.js';
import { parseSuiteArgs } from '../../faults/support/scale.js';
import { percentile, type ScenarioResult } from '../../faults/support/scenario.js';

describe('parseSuiteArgs', () => {
  it.each<[string[], NodeJS.ProcessEnv, { scale: string; only: number[] }]>([
    [[], {}, { scale: 'full', only: [] }],
    [['--reduced'], {}, { scale: 'reduced', only: [] }],
    [[], { FAULTS_SCALE: 'reduced' }, { scale: 'reduced', only: [] }],
    [['--full'], { FAULTS_SCALE: 'reduced' }, { scale: 'full', only: [] }],
    [['--reduced', '--only', '1,3'], {}, { scale: 'reduced', only: [1, 3] }],
    [[], { FAULTS_ONLY: '5' }, { scale: 'full', only: [5] }],
  ])('%j with %j', (argv, env, expected) => {
    expect(parseSuiteArgs(argv, env)).toEqual(expected);
  });

  it.each<[string[], NodeJS.ProcessEnv, string]>([
    [[], { FAULTS_SCALE: 'tiny' }, 'FAULTS_SCALE must be "full" or "reduced", got "tiny"'],
    [['--fast'], {}, 'unknown argument "--fast": use --reduced, --full or --only 1,3'],
    [['--only'], {}, '--only needs scenario numbers, e.g. --only 1,3'],
    [['--only', '1,9'], {}, '--only takes scenario numbers from 1 to 8 separated by commas, got "1,9"'],
    [['--only', 'one'], {}, '--only takes scenario numbers from 1 to 8 separated by commas, got "one"'],
  ])('rejects %j %j', (argv, env, message) => {
    expect(() => parseSuiteArgs(argv, env)).toThrow(message);
  });
});

describe('the results table', () => {
  const result: ScenarioResult = {
    id: 1,
    name: 'Redeliveries',
    scale: '500 events',
    figures: { 'notes/expected': '184/184', 'a|b': 2 },
    expected: 'each action once',
    passed: false,
    problems: ['x'],
    worst: {},
    durationMs: 1,
  };

  it('boxes every row, wraps long cells within their column and says PASS or FAIL', () => {
    const text = formatTextTable([result, { ...result, id: 2, passed: true }]);
    const lines = text.split('\n');
    expect(new Set(lines.map((line) => line.length)).size).toBe(1);
    expect(text).toContain('| 1. Redeliveries ');
    expect(text).toContain('notes/expected 184/184; a|b 2');
    expect(text).toMatch(/\| FAIL {3}\|/);
    expect(text).toMatch(/\| PASS {3}\|/);
  });

  it('escapes pipes in the Markdown table', () => {
    expect(formatMarkdownTable([result]).split('\n')[2]).toBe(
      '| 1. Redeliveries | 500 events | notes/expected 184/184; a\\|b 2 | each action once | FAIL |',
    );
  });
});

describe('percentile', () => {
  it.each([
    [[], 50, 0],
    [[5], 99, 5],
    [[4, 1, 3, 2], 50, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100, 10],
  ])('of %j at p%i is %i', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });
});
