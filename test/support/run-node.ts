import { spawn } from 'node:child_process';

export interface NodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/**
 * Runs `node <args>` as a separate process and collects its output. The process is killed after
 * `deadlineMs`, so a hang fails the test instead of stalling it; the result says how it ended.
 */
export function runNode(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  deadlineMs: number,
): Promise<NodeRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const deadline = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
    child.once('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}
