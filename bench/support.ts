import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from '../src/base/wait-for.js';

/** A node child process whose last output is kept for error messages. */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

/** SIGTERM, then SIGKILL if the process is still there after 30 s; resolves once it exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** Waits until GET url answers 2xx (a health or readiness endpoint). */
export function waitUntilOk(url: string, what: string, timeoutMs = 20_000): Promise<boolean> {
  return waitFor(
    () =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs, what },
  );
}
