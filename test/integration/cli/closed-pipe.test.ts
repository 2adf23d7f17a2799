import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `convo-bridge ... | head` (issue 30, item 6): the reader closes the pipe after a few lines, the
 * next write fails with EPIPE, and that used to be an unhandled 'error' event: a stack trace on
 * stderr and exit 1. The outputs here are several times the 64 KiB a pipe buffers, so the CLI is
 * still writing when head has gone, on every run.
 */

const CLI = resolve('dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'closed-pipe-'));

/** `node dist/cli.js ARGS | head -n LINES` in bash; the CLI's exit code, its stderr and what head printed. */
function piped(args: readonly string[], lines: number | 'all') {
  const errFile = join(dir, `stderr-${Math.random().toString(36).slice(2)}`);
  const reader = lines === 'all' ? 'cat' : `head -n ${lines}`;
  const script = `"${process.execPath}" "${CLI}" "$@" 2>"${errFile}" | ${reader}; exit "\${PIPESTATUS[0]}"`;
  const run = spawnSync('bash', ['-c', script, 'bash', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: readFileSync(errFile, 'utf8') };
}

function testFile(cases: number, failing: boolean): string {
  const lines = [`config: ${resolve('config/bridge.example.yaml')}`, 'now: 2026-11-23T03:15:00Z', 'cases:'];
  for (let i = 0; i < cases; i++) {
    lines.push(
      `  - name: case ${i}, a name long enough that the results are far more than a pipe holds`,
      '    event: { event: channel.message_in, timestamp: "2026-11-23T03:15:00Z", conversation_id: c1, message: { id: m1, channel: { id: ch_waba_1, engine: waba }, content: { type: text, text: halo } } }',
      `    expect: { matched: [ ${failing && i === cases - 1 ? 'catalog' : ''} ] }`,
    );
  }
  const file = join(dir, `${failing ? 'failing' : 'passing'}.rules-test.yaml`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The recorded example events, 30 times over as separate conversations. */
function manyEvents(): string {
  const lines = readFileSync('config/examples/recorded-events.jsonl', 'utf8').trim().split('\n');
  const out: string[] = [];
  for (let copy = 0; copy < 30; copy++) {
    for (const line of lines) {
      const event = JSON.parse(line);
      event.seq = copy * 1000 + event.seq;
      event.event.conversationId = `${event.event.conversationId}-${copy}`;
      event.event.key = `${event.event.key}-${copy}`;
      event.event.messageId = `${event.event.messageId}-${copy}`;
      out.push(JSON.stringify(event));
    }
  }
  const file = join(dir, 'many-events.jsonl');
  writeFileSync(file, `${out.join('\n')}\n`);
  return file;
}

describe('output into a pipe that closes early', () => {
  it('test | head -2: the first lines, no stack trace, exit 0 when the cases pass', () => {
    const { code, stdout, stderr } = piped(['test', testFile(1200, false)], 2);
    expect(stdout.split('\n')[1]).toMatch(/^ {2}✓ case 0,/);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it("test | head -2: the command's own exit code and message when a case fails", () => {
    const { code, stderr } = piped(['test', testFile(1200, true)], 2);
    expect(stderr).toBe('convo-bridge: 1 rule test(s) failed\n');
    expect(code).toBe(1);
  });

  it('backtest --expect --json | head -3: no stack trace, exit 1 for the differences', () => {
    const events = manyEvents();
    const saved = join(dir, 'plans.jsonl');
    const save = piped(
      ['backtest', '--config', 'config/bridge.example.yaml', '--from', events, '--save', saved, '--json'],
      3,
    );
    expect(save.stderr).toBe(`saved the plans of 1200 event(s) to ${saved}\n`);
    expect(save.code).toBe(0);
    const { code, stdout, stderr } = piped(
      [
        'backtest',
        '--config',
        'config/examples/bridge.new-keywords.yaml',
        '--from',
        events,
        '--expect',
        saved,
        '--json',
      ],
      3,
    );
    expect(stdout.split('\n')).toHaveLength(4);
    expect(stderr).toMatch(/^convo-bridge: \d+ event\(s\) differ from .*plans\.jsonl\n$/);
    expect(code).toBe(1);
    // A reader that takes it all gets all of it, although the command fails and ends at once
    // (process.exit with 600 KB still queued for the pipe cut it at 80 KB).
    const whole = piped(
      [
        'backtest',
        '--config',
        'config/examples/bridge.new-keywords.yaml',
        '--from',
        events,
        '--expect',
        saved,
        '--json',
      ],
      'all',
    );
    expect(whole.code).toBe(1);
    expect(JSON.parse(whole.stdout).expectMismatches.length).toBeGreaterThan(200);
  });
});

describe('a command that fails', () => {
  it('ends as soon as its error is printed (not when a Redis client gives up reconnecting)', async () => {
    const child = spawn(process.execPath, [
      CLI,
      'dlq',
      'list',
      '--config',
      'config/bridge.example.yaml',
      '--redis-url',
      'redis://127.0.0.1:1',
    ]);
    let stderr = '';
    let printedAt = 0;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      printedAt ||= Date.now();
    });
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    const lingered = Date.now() - printedAt;
    expect(stderr).toMatch(/^convo-bridge: cannot reach Redis at 127\.0\.0\.1:1 /);
    expect(code).toBe(2);
    // It lingered about 2 s before; a process.exit takes a few ms (1 s leaves room for a busy machine).
    expect(lingered).toBeLessThan(1_000);
  });
});
