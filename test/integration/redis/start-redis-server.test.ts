import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { startRedisServer } from '../../../src/redis/start-redis-server.js';

/** Whether a Redis answers PING on a loopback port. */
async function answers(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

describe('startRedisServer', () => {
  it('leaves no redis-server behind when the process that started it exits without stopping it', async () => {
    // A Node process that starts a server, prints its port and exits at once: as a crashed test does.
    const script = `
      import { startRedisServer } from ${JSON.stringify(new URL('../../../dist/redis/start-redis-server.js', import.meta.url).pathname)};
      const server = await startRedisServer();
      console.log('PORT ' + server.port);
      process.exit(3);
    `;
    // The build's module, not the source through tsx: the same code, without a second of start-up.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(3);
    const port = Number(/PORT (\d+)/.exec(out)?.[1]);
    expect(port).toBeGreaterThan(0);
    await waitFor(async () => !(await answers(port)), {
      timeoutMs: 5_000,
      what: `the orphan on port ${port} to be gone`,
    });
  });

  it('starts on another port when the port it picked is taken by the time redis-server binds it', async () => {
    // A redis-server whose first start finds its port taken (as when another process binds the
    // port between the pick and the bind): a wrapper that fails once as redis-server does, then
    // runs the real one.
    const dir = await mkdtemp(join(tmpdir(), 'redis-wrapper-'));
    const wrapper = join(dir, 'redis-server');
    const starts = join(dir, 'starts');
    await writeFile(
      wrapper,
      `#!/bin/sh
if [ "$1" = "--version" ]; then exec redis-server --version; fi
echo "$2" >> ${starts}
if [ "$(wc -l < ${starts})" = "1" ]; then
  echo "Warning: Could not create server TCP listening socket 127.0.0.1:$2: bind: Address already in use" >&2
  exit 1
fi
exec redis-server "$@"
`,
      { mode: 0o755 },
    );
    try {
      const server = await startRedisServer({ binary: wrapper });
      try {
        const ports = (await readFile(starts, 'utf8')).trim().split('\n').map(Number);
        expect(ports).toHaveLength(2);
        expect(ports[1]).not.toBe(ports[0]);
        expect(server.port).toBe(ports[1]);
        expect(await answers(server.port)).toBe(true);
      } finally {
        await server.stop();
      }
      // A port the caller chose is never changed behind its back.
      await writeFile(starts, '');
      await expect(startRedisServer({ binary: wrapper, port: 1 })).rejects.toThrow(/already in use/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
