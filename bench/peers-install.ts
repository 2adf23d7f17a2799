/**
 * Peers of the side-by-side benches (bench:peers, bench:cores): Node-RED installed into PEERS_DIR
 * when missing, a guard against stopping another run's peers, free ports, and child commands run to
 * their end in their own process group (so a timeout or our own signal stops all they started).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findFreePort } from '../src/redis/start-redis-server.js';
import { portIsFree } from './peers-support.js';

/** Where Node-RED (and n8n) are installed for the benches: not dependencies of this project. */
export const PEERS_DIR = process.env.PEERS_DIR ?? '/tmp/peers';

/** Exit code 2: the harness cannot run here as things are (a port or a peer is taken). */
export class CannotRun extends Error {}

export async function choosePort(name: string, fallback: number): Promise<string> {
  const set = process.env[name];
  if (set) return set;
  if (await portIsFree(fallback)) return String(fallback);
  const port = await findFreePort();
  process.stderr.write(`${name}: ${fallback} is taken, using ${port}\n`);
  return String(port);
}

/** A peer started from PEERS_DIR by someone else would be stopped by the harness's exit trap. */
export async function refuseIfPeersRunning() {
  const files = [join(PEERS_DIR, 'node-red', 'data', 'node-red.pid'), join(PEERS_DIR, 'n8n', 'n8n.pid')];
  for (const file of files) {
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (!pid) continue;
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (alive) {
      throw new CannotRun(
        `${file} names a running process (${pid}): bench-matrix.sh stops that peer when it exits, so it is ` +
          'not started while another run uses it; wait for that run, or set PEERS_DIR to another folder',
      );
    }
  }
}

/** Installs node-red@4 into PEERS_DIR/node-red when missing (bounded: 15 minutes). */
export async function ensureNodeRed() {
  const folder = join(PEERS_DIR, 'node-red');
  if (existsSync(join(folder, 'node_modules', 'node-red', 'red.js'))) return;
  process.stderr.write(`Node-RED is not installed under ${folder}: installing node-red@4 there with npm\n`);
  await mkdir(folder, { recursive: true });
  // Its own package.json, so npm installs here and never into a project above this folder.
  if (!existsSync(join(folder, 'package.json'))) {
    await writeFile(join(folder, 'package.json'), '{ "private": true }\n');
  }
  await runToEnd(
    'npm',
    ['install', '--no-audit', '--no-fund', 'node-red@4'],
    { cwd: folder, env: process.env },
    15 * 60_000,
    'npm install node-red@4',
  );
}

/** PIDs of every live descendant of `root` (from /proc), children before grandchildren. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * Runs a command to its end with its output on our stderr, in its own process group so that a
 * timeout or our own SIGINT/SIGTERM stops it and everything it started (the harness's exit trap
 * then stops its fake API, Redis, bridge and Node-RED by PID).
 */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
  timeoutMs: number,
  what: string,
): Promise<{ code: number; pid: number | undefined; interrupted: boolean }> {
  return new Promise((resolveRun, reject) => {
    const child: ChildProcess = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 2, 2] });
    const stopGroup = () => {
      if (child.pid === undefined || child.exitCode !== null) return;
      // `timeout` (bench-matrix.sh wraps load.mjs in it) moves itself into a process group of its
      // own, so the group signal misses it: its PID, like every descendant's, is taken first.
      for (const pid of [-child.pid, ...descendants(child.pid)]) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };
    let interrupted = false;
    const onSignal = () => {
      interrupted = true;
      stopGroup();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const timer = setTimeout(() => {
      process.stderr.write(`${what}: still running after ${timeoutMs / 1000} s, stopping it\n`);
      stopGroup();
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolveRun({ code: code ?? (signal ? 128 : 1), pid: child.pid, interrupted });
    });
  });
}
