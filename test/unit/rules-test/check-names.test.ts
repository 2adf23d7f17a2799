import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closestNameHint } from '../../../src/base/closest-name.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { checkNames } from '../../../src/rules-test/check-names.js';

/** Issue 30, item 3: an expectation that names a rule, action or destination that does not exist fails. */

const KNOWN = {
  rules: ['escalate-complaints', 'catalog', 'after-hours'],
  destinations: ['crm'],
};

describe('checkNames', () => {
  it.each([
    [
      { not_matched: ['escalate-complaint'] },
      'not_matched: no rule "escalate-complaint"; did you mean "escalate-complaints"?',
    ],
    [{ matched: ['catalogue'] }, 'matched: no rule "catalogue"; did you mean "catalog"?'],
    [
      { matched_include: ['afterhours'] },
      'matched_include: no rule "afterhours"; did you mean "after-hours"?',
    ],
    [{ blocked: ['catalg#0'] }, 'blocked: no rule "catalg"; did you mean "catalog"?'],
    [{ actions: [{ rule: 'catalogs' }] }, 'actions[0].rule: no rule "catalogs"; did you mean "catalog"?'],
    [
      { actions_include: ['note', { id: 'after-hour#0' }] },
      'actions_include[1].id: no rule "after-hour"; did you mean "after-hours"?',
    ],
    [
      { actions: [{ type: 'forward', destination: 'crn' }] },
      'actions[0].destination: no destination "crn"; did you mean "crm"?',
    ],
    [
      { not_matched: ['vip-customers'] },
      'not_matched: no rule "vip-customers"; the names are escalate-complaints, catalog, after-hours',
    ],
  ] as const)('%j', (expectation, line) => {
    const failures = checkNames(expectation as never, KNOWN);
    expect(failures).toEqual([
      { check: 'names that the rules under test do not have', diff: [line], list: true },
    ]);
  });

  it('passes names that exist, and action types', () => {
    const expectation = {
      matched: ['catalog'],
      not_matched: ['escalate-complaints'],
      actions: ['reply' as const, { rule: 'catalog', id: 'catalog#0' }, { id: 'after-hours#0.1' }],
      blocked: ['catalog#0~closed.0'],
    };
    expect(checkNames(expectation, KNOWN)).toEqual([]);
  });

  it('closestNameHint lists at most ten names when none is close', () => {
    const names = Array.from({ length: 12 }, (_, i) => `rule-${i}`);
    expect(closestNameHint('something-else', names)).toBe(
      `; the names are ${names.slice(0, 10).join(', ')}, ... (12 in all)`,
    );
  });
});

describe('convo-bridge test with a name the rules do not have', () => {
  it('fails the case that would pass wrongly, with the closest name, exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rules-test-names-'));
    const file = join(dir, 'typo.rules-test.yaml');
    await writeFile(
      file,
      `config: ${resolve('config/bridge.example.yaml')}
now: 2026-11-23T03:15:00Z
cases:
  - name: a typo in not_matched
    event:
      event: channel.message_in
      timestamp: "2026-11-23T03:15:00Z"
      conversation_id: c1
      message: { id: m1, channel: { engine: telegram }, content: { type: text, text: "mau refund" } }
    expect: { not_matched: [ escalate-complaint ] }
`,
    );
    let out = '';
    let err = '';
    const code = await runCli(['test', file], { stdout: (t) => (out += t), stderr: (t) => (err += t) });
    expect(out).toContain('  ✗ a typo in not_matched\n');
    expect(out).toContain('      names that the rules under test do not have:\n');
    expect(out).toContain(
      '        not_matched: no rule "escalate-complaint"; did you mean "escalate-complaints"?\n',
    );
    expect(out).toMatch(/0 passed, 1 failed\n$/);
    expect(err).toBe('convo-bridge: 1 rule test(s) failed\n');
    expect(code).toBe(1);
  });
});
