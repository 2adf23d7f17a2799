import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { call } from './emulator-test-kit.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

function capture() {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: { stdout: (text: string) => (out.stdout += text), stderr: (text: string) => (out.stderr += text) },
  };
}

describe('convo-bridge emulator (CLI)', () => {
  let dir: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  /**
   * Runs the real CLI in a child process (signals are process-wide) and waits for its banner: the
   * build's `dist/cli.js`, as installed, not the sources through tsx (a second of start-up each).
   */
  const launch = async (args: string[]) => {
    const child = spawn(process.execPath, ['dist/cli.js', 'emulator', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const output = { stdout: '', stderr: '' };
    child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(output.stdout)?.[1], {
      timeoutMs: 15_000,
      what: `the emulator banner (stderr so far: ${output.stderr})`,
    });
    return { child, output, exited, url };
  };

  it.each([['SIGTERM'], ['SIGINT']] as const)(
    'prints its URL and the inbox URL, serves the API, and stops cleanly on %s',
    async (signal) => {
      const seed = join(dir, 'seed.yaml');
      await writeFile(seed, 'conversations:\n  - id: conv-1\n    label: Budi\n');
      const { child, output, exited, url } = await launch([
        '--port',
        '0',
        '--form',
        'earlier',
        '--business-id',
        'biz-cli',
        '--secret',
        'cli-secret',
        '--seed',
        seed,
      ]);
      expect(output.stdout).toContain(`inbox:     ${url}/_emulator/inbox`);
      expect(output.stdout).toContain('(earlier form)');
      expect(output.stdout).not.toContain('cli-secret');
      const history = await call(url, 'GET', '/v1/message/conv-1', {
        headers: { Authorization: 'Bearer cli-secret' },
      });
      expect(history.json).toEqual({ status: 1, message: 'list message', data: [] });
      expect((await call(url, 'GET', '/_emulator/conversations/conv-1')).json.label).toBe('Budi');
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(output.stdout).toContain(`convo-bridge emulator stopped (${signal}).`);
      await expect(fetch(`${url}/health`)).rejects.toThrow();
    },
  );

  it('shows examples in --help', async () => {
    const { io, out } = capture();
    expect(await runCli(['emulator', '--help'], io)).toBe(0);
    expect(out.stdout).toContain('--form <form>');
    expect(out.stdout).toContain('Examples:');
    expect(out.stdout).toContain('convo-bridge emulator --port 4010 --business-id biz-1 --secret s3cret');
    // Its example posts where the bridge listens (receiver.path), not to a made-up path.
    expect(out.stdout).toContain('--webhook-url http://127.0.0.1:8080/webhooks/platform');
    expect(out.stdout).not.toContain('/webhook ');
  });

  it('says on stderr when a webhook delivery fails, attempt by attempt (issue 13)', async () => {
    const deadPort = await findFreePort();
    const { output, url } = await launch([
      '--port',
      '0',
      '--business-id',
      'biz-cli',
      '--secret',
      'cli-secret',
      '--webhook-url',
      `http://127.0.0.1:${deadPort}/webhooks/platform`,
      '--webhook-secret',
      'whsec',
      '--webhook-retry-delays',
      '10,10,10',
    ]);
    await call(url, 'POST', '/_emulator/conversations', { body: { id: 'conv-9', label: 'Budi' } });
    await call(url, 'POST', '/_emulator/conversations/conv-9/customer-message', { body: { text: 'halo' } });
    await waitFor(() => output.stderr.includes('gave up'), { timeoutMs: 10_000, what: 'the give-up line' });
    const lines = output.stderr.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      new RegExp(
        `^webhook dlv-1 channel\\.message_in \\(conv-9\\) to http://127\\.0\\.0\\.1:${deadPort}/webhooks/platform: attempt 1/4 failed: .*ECONNREFUSED.*; retrying in 10 ms$`,
      ),
    );
    expect(lines[3]).toMatch(/attempt 4\/4 failed: .*; gave up \(is the bridge running at that URL/);
  });

  it('hosts several businesses from --business and --businesses, printing no secret (issue 26)', async () => {
    const deadPort = await findFreePort();
    const file = join(dir, 'businesses.yaml');
    await writeFile(
      file,
      'businesses:\n  - id: toko-c\n    secret: ${TOKO_C_SECRET_FOR_TEST}\n    name: Toko C\n',
    );
    process.env.TOKO_C_SECRET_FOR_TEST = 'sk-cli-c';
    let launched: Awaited<ReturnType<typeof launch>>;
    try {
      launched = await launch([
        '--port',
        '0',
        '--business-id',
        'toko-a',
        '--secret',
        'sk-cli-a',
        '--business',
        `toko-b:sk-cli-b:http://127.0.0.1:${deadPort}/webhooks/toko-b`,
        '--businesses',
        file,
        '--webhook-retry-delays',
        '10,10,10',
      ]);
    } finally {
      delete process.env.TOKO_C_SECRET_FOR_TEST;
    }
    const { output, url } = launched;
    expect(output.stdout).toContain(
      'businesses (3; the admin API and the inbox take ?business=ID, default toko-a):',
    );
    expect(output.stdout).toContain(`toko-b  webhooks: http://127.0.0.1:${deadPort}/webhooks/toko-b`);
    expect(output.stdout).toContain('toko-c  webhooks: (none; PUT /_emulator/webhook?business=toko-c)');
    expect(output.stdout).not.toMatch(/sk-cli/);
    const listed = await call(url, 'GET', '/_emulator/businesses');
    expect(listed.json.businesses.map((b: { id: string; name: string }) => [b.id, b.name])).toEqual([
      ['toko-a', 'Toko Emulator'],
      ['toko-b', 'toko-b'],
      ['toko-c', 'Toko C'],
    ]);
    for (const [id, secret] of [
      ['toko-b', 'sk-cli-b'],
      ['toko-c', 'sk-cli-c'],
    ] as const) {
      await call(url, 'POST', `/_emulator/conversations?business=${id}`, { body: { id: 'conv-1' } });
      const note = await call(url, 'POST', '/v1/note', {
        headers: { Business: id, Secret: secret },
        body: { conversation_id: 'conv-1', note: id },
      });
      expect(note.json.success, id).toBe(true);
    }
    const wrong = await call(url, 'POST', '/v1/note', {
      headers: { Business: 'toko-b', Secret: 'sk-cli-c' },
      body: { conversation_id: 'conv-1', note: 'x' },
    });
    expect(wrong.json.rc).toBe(401);
    // A failed webhook of toko-b says whose it was.
    await call(url, 'POST', '/_emulator/conversations/conv-1/customer-message?business=toko-b', {
      body: { text: 'halo' },
    });
    await waitFor(() => output.stderr.includes('gave up'), { timeoutMs: 10_000, what: 'the give-up line' });
    expect(output.stderr).toMatch(
      /^webhook dlv-1 channel\.message_in \(conv-1\) of business toko-b to http:\/\/127\.0\.0\.1:\d+\/webhooks\/toko-b: attempt 1\/4 failed/,
    );
    expect(output.stderr).not.toMatch(/sk-cli/);
  });

  it.each([
    [
      ['emulator', '--port', '0'],
      "error: required option '--business-id <id>' not specified (or name the businesses with --business ID:SECRET or --businesses FILE)",
    ],
    [['emulator', '--business-id', 'b'], "error: required option '--secret <key>' not specified"],
    [
      ['emulator', '--secret', 's', '--business', 'x:y'],
      "error: required option '--business-id <id>' not specified",
    ],
    [
      ['emulator', '--business', 'toko-b'],
      `convo-bridge: --business takes ID:SECRET or ID:SECRET:WEBHOOK_URL, e.g. --business "toko-b:$TOKO_B_SECRET:http://127.0.0.1:8080/webhooks/toko-b"; one has no ID before its first ':'`,
    ],
    [
      ['emulator', '--business', 'toko-b:sk-b', '--webhook-url', 'http://127.0.0.1:1/w'],
      'convo-bridge: --webhook-url configures the business of --business-id, which is not given',
    ],
    [
      ['emulator', '--business-id', 'a', '--secret', 'sk-a', '--business', 'a:sk-b'],
      'convo-bridge: --business a: business id "a" is also given by --business-id: each business needs its own id',
    ],
  ])('rejects the businesses of %j with exit code 1 and a message', async (argv, message) => {
    const { io, out } = capture();
    expect(await runCli(argv, io)).toBe(1);
    expect(out.stderr).toContain(message);
    expect(out.stderr).not.toContain('sk-b');
  });

  it('rejects a bad --businesses file with file:line:column', async () => {
    const file = join(dir, 'bad-businesses.yaml');
    await writeFile(file, 'businesses:\n  - id: toko-b\n    secrte: sk-b\n');
    const { io, out } = capture();
    expect(await runCli(['emulator', '--businesses', file], io)).toBe(1);
    expect(out.stderr).toContain(`convo-bridge: --businesses file ${file} is invalid (2 problems)`);
    expect(out.stderr).toContain(`${file}:2:5: secret is missing`);
    expect(out.stderr).toContain(`${file}:3:5: unknown key "secrte"`);
    expect(out.stderr).not.toContain('sk-b');
  });

  const base = ['emulator', '--port', '0', '--business-id', 'b', '--secret', 's'];
  it.each([
    [['emulator', '--secret', 's'], "error: required option '--business-id <id>' not specified"],
    [
      [...base, '--form', 'later'],
      "error: option '--form <form>' argument 'later' is invalid. Allowed choices are current, earlier.",
    ],
    [
      [...base, '--port', '70000'],
      'convo-bridge: --port must be a whole number from 0 to 65535, got "70000"',
    ],
    [[...base, '--port', 'abc'], 'convo-bridge: --port must be a whole number from 0 to 65535, got "abc"'],
    // A webhook URL alone is fine now (the calls carry the Secret Key); a secret alone is not.
    [
      [...base, '--webhook-secret', 'w'],
      'convo-bridge: --webhook-secret needs --webhook-url (where the webhooks go); without --webhook-secret they carry the --secret key',
    ],
    [
      [...base, '--handover-webhook-secret', 'w'],
      'convo-bridge: --handover-webhook-secret needs --handover-webhook-url',
    ],
    [
      [...base, '--webhook-url', 'ftp://x', '--webhook-secret', 'w'],
      'convo-bridge: invalid emulator options: webhook.url: webhook.url must be an http(s) URL',
    ],
    [
      [...base, '--delivery', 'soon'],
      'convo-bridge: --delivery (immediate, manual or milliseconds) must be a whole number from 1 to 600000, got "soon"',
    ],
    [
      [...base, '--rate-limit', 'lots'],
      'convo-bridge: --rate-limit must be "off" or "<authenticated>/<unauthenticated>" per minute, e.g. 100/10',
    ],
    [
      [...base, '--random-seed', '-1'],
      'convo-bridge: --random-seed must be a whole number from 0 to 4294967295, got "-1"',
    ],
    [
      [...base, '--business-id', '  '],
      'convo-bridge: invalid emulator options: businessId: Too small: expected string to have >=1 characters',
    ],
  ])('rejects %j with exit code 1 and a message', async (argv, message) => {
    const { io, out } = capture();
    expect(await runCli(argv, io)).toBe(1);
    expect(out.stderr).toContain(message);
  });

  it('rejects a bad seed file with exit code 1 and the seed error', async () => {
    const seed = join(dir, 'bad.yaml');
    await writeFile(seed, 'conversations:\n  - id: c1\n    channel: fax\n');
    const { io, out } = capture();
    expect(await runCli([...base, '--seed', seed], io)).toBe(1);
    expect(out.stderr).toContain(
      `convo-bridge: seed file ${seed}: conversations[0].channel.type: Invalid option`,
    );
  });

  it('exits with code 2 when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const { io, out } = capture();
      expect(
        await runCli(['emulator', '--port', String(port), '--business-id', 'b', '--secret', 's'], io),
      ).toBe(2);
      expect(out.stderr).toContain(
        `the emulator cannot listen on 127.0.0.1:${port}: EADDRINUSE (the port is taken`,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
