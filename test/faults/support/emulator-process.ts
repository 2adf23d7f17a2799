import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '../../../src/base/wait-for.js';
import { AdminClient } from './admin-client.js';
import { FaultSuiteError } from './fault-suite-error.js';

const CLI = join(process.cwd(), 'dist', 'cli.js');

export interface EmulatorProcessOptions {
  businessId: string;
  secret: string;
  webhookUrl: string;
  webhookSecret: string;
  randomSeed: number;
  /** Waits before webhook attempts 2, 3 and 4. */
  webhookRetryDelaysMs: readonly [number, number, number];
  requestLogSize: number;
  deliveryLogSize: number;
  /** More `convo-bridge emulator` flags (e.g. the link rules). */
  extraArgs?: readonly string[];
}

export interface EmulatorProcess {
  readonly url: string;
  readonly admin: AdminClient;
  readonly proc: ChildProcess;
  /** SIGTERM and wait for the exit (the emulator stops cleanly on it). */
  stop(): Promise<void>;
}

/**
 * `convo-bridge emulator` from the build, as its own process (as a platform would be): the suite
 * talks to it only over HTTP, through the admin API.
 */
export async function startEmulatorProcess(options: EmulatorProcessOptions): Promise<EmulatorProcess> {
  const args = [
    CLI,
    'emulator',
    '--port',
    '0',
    '--business-id',
    options.businessId,
    '--secret',
    options.secret,
    '--webhook-url',
    options.webhookUrl,
    '--webhook-secret',
    options.webhookSecret,
    '--random-seed',
    String(options.randomSeed),
    '--webhook-retry-delays',
    options.webhookRetryDelaysMs.join(','),
    '--request-log-size',
    String(options.requestLogSize),
    '--delivery-log-size',
    String(options.deliveryLogSize),
    ...(options.extraArgs ?? []),
  ];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await waitFor(
    () => {
      if (proc.exitCode !== null) {
        throw new FaultSuiteError('EMULATOR_EXITED', `the emulator exited early: ${output}`);
      }
      return /listening on (http:\/\/\S+)/.exec(output)?.[1];
    },
    { timeoutMs: 20_000, intervalMs: 20, what: 'the emulator process to listen' },
  ).catch((error: unknown) => {
    proc.kill('SIGKILL');
    throw new FaultSuiteError('EMULATOR_START', `the emulator did not start: ${output}`, { cause: error });
  });
  return {
    url,
    admin: new AdminClient(url),
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const forced = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}
