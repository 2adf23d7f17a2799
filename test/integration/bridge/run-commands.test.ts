import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort, spawnBridge } from '../../support/bridge-harness.js';
import { testRedisUrl, uniqueName } from '../../support/redis.js';

const CLI = join(process.cwd(), 'dist', 'cli.js');

function run(
  args: string[],
  timeoutMs = 20_000,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

describe('convo-bridge start / serve / work: exit codes when a start cannot complete', () => {
  let dir: string;
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-commands-'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const config = (port: number, extra = '') => `
platform: { base_url: "http://127.0.0.1:9", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { host: 127.0.0.1, port: ${port}, secrets: [ "w" ] }
redis: { url: "${testRedisUrl()}", prefix: ${uniqueName('run')} }
${extra}`;

  it.each(['start', 'serve'])(
    '%s exits 2 with the reason when its port is taken, leaving nothing running',
    async (mode) => {
      const file = join(dir, `busy-${mode}.yaml`);
      await writeFile(file, config(busyPort));
      const result = await run([mode, '--config', file]);
      expect(result.code).toBe(2);
      // Names the setting that chose the port and how to change it.
      expect(result.stderr).toBe(
        `convo-bridge: cannot listen on 127.0.0.1:${busyPort} (receiver.port in ${file}): the port is already in use by another process; stop it, or set receiver.port to another port (0 for any free one)\n`,
      );
      expect(result.ms).toBeLessThan(15_000);
    },
  );

  it('work --port exits 2 naming --port when that port is taken', async () => {
    const file = join(dir, 'busy-work.yaml');
    await writeFile(file, config(0));
    const result = await run(['work', '--config', file, '--port', String(busyPort)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `convo-bridge: cannot listen on 127.0.0.1:${busyPort} (work --port): the port is already in use by another process; stop it, or pass another --port (0 for any free one)\n`,
    );
    expect(result.ms).toBeLessThan(15_000);
  });

  it('exits 1 with file:line:column for an invalid config', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, config(0, 'worker: { concurrency: lots }'));
    const result = await run(['start', '--config', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/bad\.yaml:5:\d+: /);
  });

  it('exits 1 and says how to give a config when there is none', async () => {
    const result = await run(['work', '--config', join(dir, 'missing.yaml')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('missing.yaml');
  });
  it("says validate's warnings at start-up, with file:line:column", async () => {
    const port = await findFreePort();
    const file = join(dir, 'warnings.yaml');
    await writeFile(
      file,
      config(
        port,
        `reply_window: { applies_to: [] }
rules:
  - { name: closing, on: window_closing, before: 2h, then: [ { note: "closing soon" } ] }
`,
      ),
    );
    const bridge = await spawnBridge('serve', file, {});
    try {
      const warning = bridge.logs.find((line) => line.includes('config warning:'));
      expect(warning, bridge.logs.join('\n')).toMatch(/warnings\.yaml:\d+:\d+: .*applies_to/);
    } finally {
      await bridge.stop('SIGTERM');
    }
  });
});
