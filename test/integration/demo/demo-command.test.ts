import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServerBinary } from '../../../src/redis/start-redis-server.js';
import { testRedisUrl } from '../../support/redis.js';
import { runNode } from '../../support/run-node.js';

/** The demo as a user of the package runs it: a separate process, `convo-bridge demo` (the build's dist/cli.js). */
const runDemoProcess = (env: NodeJS.ProcessEnv, deadlineMs: number) =>
  runNode(['dist/cli.js', 'demo', '--no-progress'], env, deadlineMs);

function envWithout(...names: string[]): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of names) delete env[name];
  return env;
}

describe('convo-bridge demo (spawned like a user would)', () => {
  it('plays the morning, prints the table and verifies everything happened exactly once (exit 0)', async () => {
    // As on a fresh machine: a private redis-server when there is one, else the test Redis.
    const env = hasRedisServerBinary()
      ? envWithout('REDIS_URL', 'PORT', 'LOG_LEVEL')
      : { ...envWithout('PORT', 'LOG_LEVEL'), REDIS_URL: testRedisUrl() };
    const started = Date.now();
    const result = await runDemoProcess(env, 120_000);
    const seconds = (Date.now() - started) / 1000;

    expect(result.signal, `killed at the 120 s deadline\n${result.stdout}`).toBeNull();
    expect(result.stderr).toBe('');
    expect(result.code, result.stdout).toBe(0);
    expect(seconds).toBeLessThan(120);

    const out = result.stdout;
    // What ran where: free ports, printed.
    expect(out).toMatch(
      / {2}emulator {3}http:\/\/127\.0\.0\.1:\d+ {3}inbox http:\/\/127\.0\.0\.1:\d+\/_emulator\/inbox/,
    );
    expect(out).toMatch(/ {2}bridge {5}http:\/\/127\.0\.0\.1:\d+\/webhooks\/platform/);
    // One plain line per step (no progress bar without a TTY).
    expect(out).toContain('[ 1/20] ');
    expect(out).toContain('[20/20] verified: everything exactly once');
    // The table, per conversation.
    for (const text of [
      'Dewi · WhatsApp API',
      'Budi · WhatsApp QR',
      'Sari · Instagram',
      'Andi · Instagram',
      'Rina · Telegram',
      'Joko · Web chat',
      'Maya · Telegram',
      'when_closed (window)',
      'escalate-complaints',
      'after-hours-whatsapp',
      'ai-unsure',
      'katalog.pdf (document)',
      '[delivered]',
      'cancelled',
      'fired',
      '1 reply',
    ]) {
      expect(out, text).toContain(text);
    }
    // The totals, each from the side that sees it.
    expect(out).toContain('  webhooks      14 deliveries by the platform (3 redeliveries), 0 failed\n');
    expect(out).toContain('  receiver      11 events stored, 3 duplicates ignored\n');
    expect(out).toContain('2 x 503 after a send went out (found in history on retry, not sent again)');
    expect(out).toContain('1 x 429 with Retry-After: 1 on a note (the client waited 1 s and retried)');
    expect(out).toContain(
      '  CRM           3 forwards accepted (4 requests, 1 retried after a CRM 503, 0 bad signatures)\n',
    );
    expect(out).toContain('  dead letters  0\n');
    expect(out).toMatch(
      /Verified: all 16 expected actions happened exactly once, nothing else happened \(\d+ s\)\./,
    );
    expect(out).toMatch(
      /queues {8}http:\/\/127\.0\.0\.1:\d+\/admin\/queues {2}\(user admin, password [0-9a-f]{12}\)/,
    );
    // The bridge's log went to a file; its path is printed.
    const logFile = /bridge log {4}(\S+bridge\.log)/.exec(out)?.[1];
    expect(logFile).toBeDefined();
    // A run that went well leaves no /tmp/convo-bridge-demo-* folder behind (issue 13, item 11).
    expect(out).toContain('(removed when the demo ends)');
    expect(existsSync(join(logFile ?? '', '..'))).toBe(false);
  }, 130_000);

  describe('without Redis', () => {
    let nodeOnly: string;
    beforeAll(async () => {
      // A PATH holding only node (node's own directory may also hold redis-server, e.g. /usr/bin).
      nodeOnly = await mkdtemp(join(tmpdir(), 'convo-bridge-node-only-'));
      await symlink(process.execPath, join(nodeOnly, 'node'));
    });
    afterAll(async () => {
      await rm(nodeOnly, { recursive: true, force: true });
    });

    it('exits 2 and says how to get one when REDIS_URL is unset and redis-server is not on the PATH', async () => {
      const result = await runDemoProcess({ ...envWithout('REDIS_URL'), PATH: nodeOnly }, 60_000);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'convo-bridge: the demo needs Redis: REDIS_URL is not set and there is no `redis-server` on the PATH. ' +
          'install it with `apt-get install redis-server` (then run the demo again), or start one with ' +
          '`docker compose up redis` and run `REDIS_URL=redis://127.0.0.1:6379 npm run demo`\n',
      );
    }, 60_000);

    it('exits 2 when REDIS_URL points at nothing', async () => {
      const result = await runDemoProcess({ ...process.env, REDIS_URL: 'redis://127.0.0.1:1' }, 60_000);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('convo-bridge: REDIS_URL is set but Redis does not answer there');
      expect(result.stderr).toContain('unset REDIS_URL to let the demo start a private redis-server');
    }, 60_000);
  });
});
