import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';
import { deleteKeys } from '../../support/redis.js';

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(args, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

/** `convo-bridge start` expected to refuse: its exit code and output. */
function startExpectingExit(configPath: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const proc = spawn(process.execPath, [join('dist', 'cli.js'), 'start', '--config', configPath], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const killer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.once('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}

// Issue 14, point 3: changing redis.shards drains first, then `convo-bridge reshard` moves the data.
describe('changing the shard count of a running system', () => {
  let world: World | undefined;
  afterEach(async () => {
    if (world) await deleteKeys(world.redis, `{${world.prefix}`);
    await world?.close();
    world = undefined;
  });

  it('refuses to start on the old layout, reshards a drained Redis, and loses no state: once-marks, dedupe, timers', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'closed', timer: '12s' }) });
    const w = world;
    // Before: one after-hours reply (once per conversation), one complaint with its timer pending.
    w.conversation('rs-once', { type: 'whatsapp_qr', id: 'ch_wa_qr' }, 'Sari');
    w.say('rs-once', 'Halo, masih buka?');
    w.conversation('rs-timer', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    const escalatedAt = Date.now();
    w.say('rs-timer', 'Saya kecewa');
    await waitFor(
      async () => w.apiMessages('rs-once').length === 1 && (await w.timerIds('rs-timer')).length === 1,
      { timeoutMs: 15_000, what: 'the reply and the pending timer' },
    );
    const [first] = w.admin.deliveries().filter((d) => d.conversationId === 'rs-once');
    const [complaint] = w.admin.deliveries().filter((d) => d.conversationId === 'rs-timer');
    if (!first || !complaint) throw new Error('no delivery recorded');

    // With the bridge running, a reshard is refused (and says why).
    const text = await readFile(w.configPath, 'utf8');
    await writeFile(w.configPath, text.replace(/(redis:\n(?: {2}.*\n)*)/, '$1  shards: 3\n'));
    const target = ['--config', w.configPath, '--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
    const busy = await cli(['reshard', '--to', '3', '--check', ...target]);
    expect(busy.code).toBe(2);
    expect(busy.err).toMatch(/not ready to reshard: \d+ worker connection\(s\) are running/);

    // Stop the bridge; a start with the new shard count refuses, naming the fix.
    const [bridge] = w.bridges;
    expect(await bridge?.stop('SIGTERM')).toBe(0);
    const refused = await startExpectingExit(w.configPath, w.env);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('this Redis holds prefix');
    expect(refused.output).toContain(
      'as 1 untagged shard (the single-Redis layout), but the config asks for 3 tagged shard(s)',
    );
    expect(refused.output).toContain('convo-bridge reshard --to 3');

    const moved = await cli(['reshard', '--to', '3', ...target]);
    expect(moved.err).toBe('');
    expect(moved.code).toBe(0);
    expect(moved.out).toMatch(/done: [1-9]\d* conversation\(s\), [1-9]\d* dedupe marker\(s\), 1 timer\(s\)/);
    const again = await cli(['reshard', '--to', '3', ...target]);
    expect(again.out).toContain('already has 3 queue shard(s)');

    // After: the bridge starts on 3 shards. A redelivery of the old event is still a duplicate,
    // the once-mark still holds, and the moved timer fires once, on time.
    await w.launch('start');
    w.admin.redeliver(first.id);
    // The complaint again: without its dedupe marker it would be escalated (noted) a second time.
    w.admin.redeliver(complaint.id);
    w.say('rs-once', 'Halo lagi');
    await w.admin.deliveriesSettled();
    await waitFor(() => w.notes('rs-timer').length === 2, {
      timeoutMs: 20_000,
      what: 'the moved timer to fire',
    });
    expect(Date.now() - escalatedAt).toBeGreaterThanOrEqual(12_000);
    expect(w.notes('rs-timer')).toEqual([
      "Escalated by escalate-complaints: customer wrote 'kecewa'",
      'No agent reply 15 minutes after escalation.',
    ]);
    expect(w.apiMessages('rs-once')).toHaveLength(1);
    expect(w.requests('send', 'rs-once')).toHaveLength(1);
  });
});
