import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listDiff } from '../../../src/base/list-diff.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { formatTestResults } from '../../../src/rules-test/format-test-results.js';
import { runRuleTestFile } from '../../../src/rules-test/run-rule-tests.js';

const EXAMPLE_TESTS = 'config/bridge.example.rules-test.yaml';
const EXAMPLE_CONFIG = resolve('config/bridge.example.yaml');

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

async function testFile(body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rules-test-'));
  const file = join(dir, 'broken.rules-test.yaml');
  await writeFile(file, `config: ${EXAMPLE_CONFIG}\n${body}`);
  return file;
}

const COMPLAINT = `
    event:
      event: channel.message_in
      timestamp: "2026-11-23T03:15:00Z"
      conversation_id: c1
      message: { id: m1, channel: { engine: telegram }, content: { type: text, text: "mau refund" } }`;

describe('convo-bridge test', () => {
  it('passes on the example config and its shipped tests', async () => {
    const { code, out } = await run(['test', EXAMPLE_TESTS]);
    expect(out).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(out).not.toContain('✗');
    expect(code).toBe(0);
  });

  it('finds the tests beside the config when no file is given', async () => {
    const { code, out } = await run(['test', '--config', 'config/bridge.example.yaml']);
    expect(out).toContain(EXAMPLE_TESTS);
    expect(code).toBe(0);
  });

  it('fails a broken case with a diff and the file:line of the case, exit 1', async () => {
    const file = await testFile(`now: 2026-11-23T03:15:00Z
cases:
  - name: fine
${COMPLAINT}
    expect: { matched: [ escalate-complaints ] }
  - name: wrong order and a missing forward
${COMPLAINT}
    expect:
      actions: [ need_human, note, timer ]
`);
    const { code, out, err } = await run(['test', file]);
    const text = await readFile(file, 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes('name: wrong order')) + 1;
    expect(line).toBeGreaterThan(5);
    expect(code).toBe(1);
    expect(err).toContain('1 rule test(s) failed');
    expect(out).toContain('  ✓ fine');
    expect(out).toContain('  ✗ wrong order and a missing forward');
    expect(out).toContain(`at ${file}:${line}\n`);
    expect(out).toContain('actions (exact, in order): - expected, + actual');
    expect(out).toContain('- 1. need_human');
    expect(out).toContain(
      '+ 1. note [escalate-complaints#0] "Escalated by escalate-complaints: customer wrote \'refund\'"',
    );
    expect(out).toContain('+ 3. forward [escalate-complaints#2] to crm');
    expect(out).toMatch(/1 passed, 1 failed\n$/);
  });

  it('reports a wrong matched list as a line diff', async () => {
    const file = await testFile(`now: 2026-11-23T03:15:00Z
cases:
  - name: catalog expected
${COMPLAINT}
    expect: { matched: [ catalog ], no_action: true }
`);
    const [result] = [await runRuleTestFile(file)];
    const failures = result.cases[0]?.failures ?? [];
    expect(failures.map((f) => f.check)).toEqual(['matched (exact, in config order)', 'no_action']);
    expect(failures[0]?.diff).toEqual(['- catalog', '+ escalate-complaints']);
    expect(formatTestResults([result]).failed).toBe(1);
  });

  it.each([
    ['no cases', 'cases: []\n', /cases: list at least one case/],
    [
      'an unknown key',
      'cases:\n  - name: x\n    evnt: {}\n    expect: { no_action: true }\n',
      /:3:5: cases\.0\.evnt|cases\.0/,
    ],
    [
      'both event and event_file',
      `cases:\n  - name: x\n${COMPLAINT}\n    event_file: a.json\n    expect: { no_action: true }\n`,
      /exactly one of event/,
    ],
    [
      'an empty expect',
      `cases:\n  - name: x\n${COMPLAINT}\n    expect: {}\n`,
      /expect needs at least one check/,
    ],
  ])('rejects a test file with %s, naming file:line', async (_what, body, message) => {
    const file = await testFile(body);
    const result = await runRuleTestFile(file);
    expect(result.error).toMatch(message);
    expect(result.error).toContain(`${file}:`);
    expect(formatTestResults([result]).failed).toBe(1);
  });

  it('refuses an event whose timestamp cannot be read, naming the field (it used to become now)', async () => {
    const file = await testFile(
      `cases:\n  - name: x\n${COMPLAINT.replace('"2026-11-23T03:15:00Z"', '"2026-02-30T03:15:00Z"')}\n    expect: { no_action: true }\n`,
    );
    const result = await runRuleTestFile(file);
    expect(result.cases[0]?.error).toMatch(
      /: cases\[0\]\.event: timestamp: "2026-02-30T03:15:00Z" is not a time: write ISO-8601 with a zone/,
    );
    expect(formatTestResults([result]).failed).toBe(1);
  });

  it('reports an event file that is missing on its case', async () => {
    const file = await testFile(
      'cases:\n  - name: x\n    event_file: nope.json\n    expect: { no_action: true }\n',
    );
    const result = await runRuleTestFile(file);
    expect(result.cases[0]?.error).toMatch(/cannot read event_file nope\.json \(ENOENT\)/);
  });
});

describe('a recorded line is an event everywhere', () => {
  it('explain --event takes one line of events export, with its facts and instant', async () => {
    const [first] = (await readFile('config/examples/recorded-events.jsonl', 'utf8')).split('\n');
    const dir = await mkdtemp(join(tmpdir(), 'recorded-line-'));
    const file = join(dir, 'line.json');
    await writeFile(file, first ?? '');
    const recorded = JSON.parse(first ?? '{}');
    const { code, out } = await run([
      'explain',
      '--config',
      'config/bridge.example.yaml',
      '--event',
      file,
      '--json',
    ]);
    expect(code).toBe(0);
    const plan = JSON.parse(out);
    expect(plan.now).toBe(recorded.now);
    expect(plan.event).toBe(recorded.event.key);
    // Recorded at 18:33 in Jakarta: the example's after-hours rule would answer "Saya mau refund"
    // if escalate-complaints did not stop it.
    expect(plan.matched.map((m: { rule: string }) => m.rule)).toEqual(['escalate-complaints']);
  });

  it('a test case takes a recorded line as its event', async () => {
    const [first] = (await readFile('config/examples/recorded-events.jsonl', 'utf8')).split('\n');
    const file = await testFile(
      `cases:\n  - name: recorded\n    event: ${first}\n    expect: { matched: [ escalate-complaints ], actions_include: [ need_human ] }\n`,
    );
    const result = await runRuleTestFile(file);
    expect(result.error).toBeUndefined();
    expect(result.cases[0]).toMatchObject({ name: 'recorded', failures: [] });
  });
});

describe('listDiff', () => {
  it('marks one missing and one extra item', () => {
    expect(listDiff(['a', 'b', 'c'], ['a', 'c', 'd'])).toEqual(['  a', '- b', '  c', '+ d']);
  });
});
