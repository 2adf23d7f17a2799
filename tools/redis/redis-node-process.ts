import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { ConvoBridgeError } from '../../src/base/errors.js';
import { waitFor } from '../../src/base/wait-for.js';

export interface RedisNodeProcessOptions {
  binary: string;
  /** Says which node this is in errors ("cluster node 2", "sentinel 1"). */
  label: string;
  port: number;
  /** A config file the process reads (and, for a sentinel, rewrites). */
  configFile: string;
  /** Start in sentinel mode (`redis-server <file> --sentinel`). */
  sentinel?: boolean;
  /** AUTH for the readiness probe of a password-protected data node. */
  password?: string;
  /** How long a start may take before it is an error. */
  startTimeoutMs?: number;
}

export interface RedisNodeProcess {
  readonly label: string;
  readonly port: number;
  /** The pid of the running process, or undefined when it is not running. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /**
   * Starts the process (again) and resolves once it answers PING. `extraArgs` are appended to the
   * command line (e.g. `--replicaof 127.0.0.1 7001` for a restart as a replica).
   */
  start(extraArgs?: readonly string[]): Promise<void>;
  /** Sends a signal and waits until the process has exited; its data dir is kept. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** The last few KB of what the process wrote (its log goes to stdout, fatal errors to stderr). */
  outputTail(): string;
}

const TAIL_CHARS = 4000;

/**
 * One `redis-server` (or sentinel) process of a test topology, started from a config file and
 * bound to 127.0.0.1. A process that exits while starting throws with its output tail, so that a
 * bad option or a port taken by someone else reads as such instead of as a timeout.
 */
export function createRedisNodeProcess(options: RedisNodeProcessOptions): RedisNodeProcess {
  let child: ChildProcess | undefined;
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-TAIL_CHARS);
  };
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  return {
    label: options.label,
    port: options.port,
    get pid() {
      return isRunning() ? child?.pid : undefined;
    },
    get running() {
      return isRunning();
    },
    outputTail: () => output,
    async start(extraArgs = []) {
      if (isRunning()) {
        throw new ConvoBridgeError(`${options.label} (port ${options.port}) is already running`, {
          code: 'REDIS_NODE_RUNNING',
        });
      }
      const args = [options.configFile, ...(options.sentinel ? ['--sentinel'] : []), ...extraArgs];
      const proc = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      output = '';
      proc.stdout?.on('data', append);
      proc.stderr?.on('data', append);
      // Stdio is closed after the process is gone, so the output tail is complete by then.
      let gone = false;
      const exitedEarly = new Promise<never>((_resolve, reject) => {
        proc.once('error', (error) => {
          gone = true;
          reject(exited(options, `could not be started (${error.message})`, output, error));
        });
        proc.once('close', (code, signal) => {
          gone = true;
          reject(exited(options, `exited with ${code ?? signal}`, output));
        });
      });
      exitedEarly.catch(() => {});
      const probe = new Redis({
        port: options.port,
        host: '127.0.0.1',
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: 1000,
        ...(options.password === undefined ? {} : { password: options.password }),
      });
      probe.on('error', () => {});
      const answersPing = waitFor(
        async () => {
          if (gone) return true; // exitedEarly has the error
          if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
          // While loading its AOF a node answers LOADING; wait until it takes commands.
          return (await probe.ping().catch(() => '')) === 'PONG';
        },
        {
          timeoutMs: options.startTimeoutMs ?? 10_000,
          intervalMs: 20,
          what: `${options.label} on port ${options.port} to answer PING`,
        },
      );
      try {
        await Promise.race([answersPing, exitedEarly]).catch((error: unknown) => {
          if (error instanceof ConvoBridgeError) throw error;
          proc.kill('SIGKILL');
          throw new ConvoBridgeError(
            `${options.label} did not answer PING on 127.0.0.1:${options.port} in time; its output ends with:\n${output}`,
            { code: 'REDIS_SERVER_START_TIMEOUT', cause: error },
          );
        });
        // PONG from a process that took the port first, while this one is failing to bind it.
        if (gone) await exitedEarly;
      } finally {
        probe.disconnect();
      }
    },
    async kill(signal = 'SIGKILL') {
      const proc = child;
      if (!proc || !isRunning()) return;
      const exitedPromise = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill(signal);
      await exitedPromise;
    },
  };
}

function exited(options: RedisNodeProcessOptions, how: string, output: string, cause?: Error) {
  // "Address already in use": findFreePort closed its probe socket and something else took the port
  // before the node bound it. The topology starters retry those on fresh ports.
  const portTaken = /address already in use/i.test(output);
  return new ConvoBridgeError(
    `${options.label} (${options.binary}, port ${options.port}) ${how} while starting; its output ends with:\n${output || '(nothing)'}`,
    { code: portTaken ? 'REDIS_PORT_IN_USE' : 'REDIS_SERVER_EXITED', ...(cause ? { cause } : {}) },
  );
}
