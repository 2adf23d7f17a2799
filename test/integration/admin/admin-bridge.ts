import { request } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { waitFor } from '../../../src/base/wait-for.js';
import { type RunningBridge, runBridge } from '../../../src/bridge/run-bridge.js';
import { exampleConfig, writeTempConfig } from '../../support/bridge-harness.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

export const ADMIN_USER = 'ops';
export const ADMIN_PASSWORD = 'correct-horse-battery';

export interface AdminBridge {
  bridge: RunningBridge;
  /** The receiver, e.g. http://127.0.0.1:40123. */
  receiverUrl: string;
  /** Where the admin surface listens: admin.listen's server, else the receiver. */
  adminUrl: string;
  /** The bridge's Redis key prefix. */
  prefix: string;
  /** The bridge's log, as JSON lines. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * A real bridge (`start`, in-process) on the shared test Redis with the example config and the
 * given `admin:` section, its log kept as JSON lines; repeated log lines are summed up every
 * `repeatLogIntervalMs` (default 1 s).
 */
export async function startAdminBridge(
  adminSection: string,
  repeatLogIntervalMs = 1_000,
): Promise<AdminBridge> {
  const prefix = uniqueName('admin');
  const file = await writeTempConfig(`${await exampleConfig({ hours: 'open' })}admin: ${adminSection}\n`);
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const cleanup = async () => {
    const redis = connectTestRedis();
    await deleteKeys(redis, prefix);
    await redis.quit();
    await file.cleanup();
  };
  const bridge = await runBridge({
    mode: 'start',
    configPath: file.path,
    logger: pino({ level: 'info' }, sink),
    outageReportIntervalMs: repeatLogIntervalMs,
    env: {
      PLATFORM_BASE_URL: 'http://127.0.0.1:9',
      BUSINESS_ID: 'biz-admin',
      SECRET_KEY: 'platform-secret',
      WEBHOOK_SECRET: 'webhook-secret',
      PORT: '0',
      RECEIVER_HOST: '127.0.0.1',
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
    },
  }).catch(async (error: unknown) => {
    await cleanup();
    throw error;
  });
  const receiverUrl = bridge.url ?? '';
  const apart = logs.find((line) => String(line.msg).startsWith('admin surface listening apart'));
  const adminUrl = apart ? new URL(String(apart.url)).origin : receiverUrl;
  return {
    bridge,
    receiverUrl,
    adminUrl,
    prefix,
    logs,
    async close() {
      await bridge.stop('test over');
      await cleanup();
    },
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One GET on a fresh connection from `from` (loopback has all of 127.0.0.0/8, so each test client
 * can have an address of its own), with basic auth when `auth` is given.
 */
export function get(
  url: string,
  options: { from?: string; auth?: { username: string; password: string } } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.auth) {
    const { username, password } = options.auth;
    headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { headers, agent: false, timeout: 5_000, ...(options.from ? { localAddress: options.from } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** The value of one sample of `name` with `labels` in a Prometheus text exposition. */
export function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** Waits for a log line that `matches`, and returns it. */
export async function logLine(
  logs: Record<string, unknown>[],
  matches: (line: Record<string, unknown>) => boolean,
  what: string,
): Promise<Record<string, unknown>> {
  await waitFor(() => logs.some(matches), { timeoutMs: 10_000, what });
  return logs.find(matches) as Record<string, unknown>;
}
