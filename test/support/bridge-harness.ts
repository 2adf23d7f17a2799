import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../../src/base/wait-for.js';
import { findFreePort } from '../../src/redis/start-redis-server.js';

const CLI = join(process.cwd(), 'dist', 'cli.js');

export interface BridgeProcess {
  readonly proc: ChildProcess;
  readonly logs: string[];
  /** Log lines parsed as JSON (pino), others skipped. */
  jsonLogs(): Record<string, unknown>[];
  /** Sends a signal and waits for the exit; resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `convo-bridge <mode>` from the build as a user would (node dist/cli.js ...), waits until it
 * says it is up, and keeps its output for assertions and for the failure message.
 */
export function spawnBridge(
  mode: 'start' | 'serve' | 'work',
  configPath: string,
  env: Record<string, string>,
  extraArgs: string[] = [],
  /** A log text that says it is up (default: "worker started" for work, else "receiver listening"). */
  upText?: string,
): Promise<BridgeProcess> {
  return spawnBridgeFrom(CLI, mode, configPath, env, extraArgs, upText);
}

/** The same from another build's `cli.js` (the upgrade test runs the previous release's). */
export async function spawnBridgeFrom(
  cli: string,
  mode: 'start' | 'serve' | 'work',
  configPath: string,
  env: Record<string, string>,
  extraArgs: string[] = [],
  upText?: string,
): Promise<BridgeProcess> {
  const proc = spawn(process.execPath, [cli, mode, '--config', configPath, ...extraArgs], {
    env: { ...process.env, ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let partial = '';
  const collect = (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    logs.push(...lines);
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const upMarker = upText ?? (mode === 'work' ? 'worker started' : 'receiver listening');
  await waitFor(
    () => {
      if (proc.exitCode !== null) throw new Error(`convo-bridge ${mode} exited early:\n${logs.join('\n')}`);
      return logs.some((line) => line.includes(upMarker));
    },
    { timeoutMs: 15_000, what: `convo-bridge ${mode} to start`, intervalMs: 20 },
  ).catch((error: unknown) => {
    proc.kill('SIGKILL');
    throw new Error(`${String(error)}\n--- bridge output ---\n${logs.join('\n')}`);
  });
  return {
    proc,
    logs,
    jsonLogs: () =>
      logs.flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

export interface CrmRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** The Standard Webhooks signature checked out with the destination secret. */
  verified: boolean;
  webhookId: string;
}

/** A CRM endpoint that records forwards and checks their signatures. */
export async function startCrmSink(secret: string) {
  const requests: CrmRequest[] = [];
  const verifier = new Webhook(secret, { format: 'raw' });
  let failNext = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      if (failNext > 0) {
        failNext -= 1;
        res.writeHead(503).end();
        return;
      }
      let verified = false;
      try {
        verifier.verify(body, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
        verified = true;
      } catch {
        verified = false;
      }
      requests.push({ headers: req.headers, body, verified, webhookId: String(req.headers['webhook-id']) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    /** The next n forwards are answered 503. */
    failNext(n: number) {
      failNext = n;
    },
    /** Forwards whose body is about this conversation. */
    forConversation(conversationId: string) {
      return requests.filter(
        (r) =>
          (JSON.parse(r.body) as { event: { conversationId: string } }).event.conversationId ===
          conversationId,
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type CrmSink = Awaited<ReturnType<typeof startCrmSink>>;

/** Today in Asia/Jakarta as YYYY-MM-DD, shifted by `days`. */
/** Days (relative to today, Jakarta time) that `hours: 'closed'` makes holidays. */
const CLOSED_DAYS = [-4, -3, -2, -1, 0, 1];

export function jakartaDate(days = 0): string {
  const shifted = new Date(Date.now() + days * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Jakarta' }).format(shifted);
}

export interface ExampleEdits {
  /**
   * 'closed': the four days before today, today and tomorrow are holidays; 'open': every day
   * 00:00-24:00. Rules judge business hours at the message's own time, and the fault suite sends
   * messages up to 72 hours old (scenario 5): with only yesterday closed, whether those fell in
   * business hours depended on the day the suite ran (it failed on a Wednesday).
   */
  hours: 'open' | 'closed';
  /** Replace the escalation timer's `15m` (tests use seconds). */
  timer?: string;
  /** A `worker:` section appended to the file. */
  worker?: Record<string, string | number>;
  /**
   * A `retention:` section (before `rules:`): a test that reads what a done job returned keeps
   * done jobs (`done_events: 1h`), as an operator debugging would; the default removes them.
   */
  retention?: Record<string, string | number>;
  /** Rules appended after the example's four. */
  extraRules?: string;
}

/**
 * The shipped example config, as written, with only the edits a test needs to be deterministic:
 * business hours, the timer length, a key prefix per test, and worker timings.
 */
export async function exampleConfig(edits: ExampleEdits): Promise<string> {
  let text = await readFile(join(process.cwd(), 'config', 'bridge.example.yaml'), 'utf8');
  const hours =
    edits.hours === 'open'
      ? 'business_hours:\n  weekly: { mon-sun: "00:00-24:00" }\n'
      : `business_hours:\n  weekly: { mon-fri: "08:00-17:00", sat: "09:00-13:00" }\n  holidays: [ ${CLOSED_DAYS.map((d) => `"${jakartaDate(d)}"`).join(', ')} ]\n`;
  text = text.replace(/business_hours:\n(?: {2}.*\n)+/, hours);
  text = text.replace(/(redis:\n {2}url: .*\n)/, '$1  prefix: ${REDIS_PREFIX}\n');
  if (edits.timer) text = text.replace('after: 15m', `after: ${edits.timer}`);
  if (edits.extraRules) text = `${text.trimEnd()}\n${edits.extraRules}\n`;
  if (edits.worker) {
    text += `worker:\n${Object.entries(edits.worker)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}\n`;
  }
  if (edits.retention) {
    // Before `rules:`, so that a test may still append rules to the end of the file.
    const section = `retention:\n${Object.entries(edits.retention)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}\n`;
    text = text.replace(/^rules:\n/m, () => `${section}rules:\n`);
  }
  return text;
}

export async function writeTempConfig(text: string) {
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-e2e-'));
  const path = join(dir, 'bridge.yaml');
  await writeFile(path, text);
  return { path, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export { findFreePort };
