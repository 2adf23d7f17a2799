import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ConvoBridgeError } from '../base/errors.js';
import { waitFor } from '../base/wait-for.js';

export interface RedisServerOptions {
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  /** Turn the append-only file on (durability tests, the demo). */
  appendOnly?: boolean;
  /** Data directory; a fresh temp dir when omitted (removed on `stop`). */
  dir?: string;
  binary?: string;
}

export interface RedisServerHandle {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the server cleanly (SHUTDOWN semantics via SIGTERM) and removes a temp dir it made. */
  stop(): Promise<void>;
  /** Kills the process with a signal and waits until it has exited; the data dir is kept. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and dir (after `kill`). */
  restart(): Promise<void>;
}

export const REDIS_INSTALL_HINT =
  'install it with `apt-get install -y redis-server`, run one with `docker compose up redis`, ' +
  'or point REDIS_URL at a Redis you already have';

export function hasRedisServerBinary(binary = 'redis-server'): boolean {
  const probe = spawnSync(binary, ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The servers this process started and that still run: killed when the process exits, so a test
 * run (or a demo) that crashes or exits without stopping them leaves no orphaned `redis-server`.
 */
const running = new Set<ChildProcess>();
let exitHookSet = false;

function track(proc: ChildProcess): void {
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  if (exitHookSet) return;
  exitHookSet = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** How many times a server on a port picked here is started again on another when the port was taken meanwhile. */
const PORT_TAKEN_RETRIES = 3;

/**
 * Starts a private `redis-server` bound to 127.0.0.1 on a free port. Used by the test suites
 * (never touching the shared Redis) and by `npm run demo` when no REDIS_URL is given.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const binary = options.binary ?? 'redis-server';
  if (!hasRedisServerBinary(binary)) {
    throw new ConvoBridgeError(`cannot start Redis: \`${binary}\` was not found; ${REDIS_INSTALL_HINT}`, {
      code: 'REDIS_SERVER_MISSING',
    });
  }
  let port = options.port ?? (await findFreePort());
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'convo-bridge-redis-')));
  let child: ChildProcess | undefined;

  const launch = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      options.appendOnly ? 'yes' : 'no',
      '--appendfsync',
      'everysec',
      '--maxmemory-policy',
      'noeviction',
      '--loglevel',
      'warning',
    ];
    const proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    track(proc);
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      // An exit ends the wait at once (a taken port, a bad flag) rather than at the deadline.
      const exited = () => proc.exitCode !== null || proc.signalCode !== null;
      await waitFor(
        async () => {
          if (exited()) return true;
          if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
          // While loading the AOF, Redis answers LOADING; wait until it takes commands.
          return (await probe.ping().catch(() => '')) === 'PONG';
        },
        { timeoutMs: 10_000, intervalMs: 20, what: `redis-server on port ${port} to answer PING` },
      );
      if (exited()) {
        throw new ConvoBridgeError(`redis-server exited with code ${proc.exitCode}: ${stderr.trim()}`, {
          code: 'REDIS_SERVER_EXITED',
        });
      }
    } catch (error) {
      // A server that never answered is not left running.
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      throw error;
    } finally {
      probe.disconnect();
    }
  };

  const waitExit = (proc: ChildProcess) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => proc.once('exit', () => resolve()));

  // A port found free can be taken by another process before redis-server binds it: try another.
  for (let attempt = 0; ; attempt++) {
    try {
      await launch();
      break;
    } catch (error) {
      const taken = error instanceof ConvoBridgeError && /already in use/i.test(error.message);
      if (!taken || options.port !== undefined || attempt >= PORT_TAKEN_RETRIES) throw error;
      port = await findFreePort();
    }
  }

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      if (child) {
        const proc = child;
        const exited = waitExit(proc);
        proc.kill('SIGTERM');
        await exited;
      }
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
    async kill(signal = 'SIGKILL') {
      if (!child) return;
      const proc = child;
      const exited = waitExit(proc);
      proc.kill(signal);
      await exited;
    },
    async restart() {
      await launch();
    },
  };
}
