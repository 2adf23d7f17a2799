/**
 * `npm run bench:rate`: how well the bridge uses the earlier form's call budget. The emulator runs
 * in the earlier form with its stated limit (100 authenticated requests per minute, sliding
 * window, then `rc` 429); convo-bridge runs with the same form and its default budget (100 per
 * minute, shared by all workers through Redis). More events arrive than the budget can serve, so
 * the bridge has to pace itself. Measured over RATE_SECONDS (default 120): the share of the budget
 * used (calls the platform accepted / calls the limit allows in that time) and the share of calls
 * answered 429. Goals: at least 95% used, at most 2% 429s.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../src/base/wait-for.js';
import { findFreePort, type RedisServerHandle, startRedisServer } from '../src/redis/start-redis-server.js';
import { spawnNode, stopChild, waitUntilOk } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'dist', 'cli.js');
const SECONDS = Number(process.env.RATE_SECONDS ?? 120);
const LIMIT_PER_MINUTE = 100;
const SECRET = 'rate-bench-secret';
const WEBHOOK_SECRET = 'rate-bench-webhook';

export interface RateBudgetResult {
  seconds: number;
  limitPerMinute: number;
  accepted: number;
  allowed: number;
  rejected429: number;
  budgetUsedPct: number;
  rateLimitedPct: number;
}

const CONFIG = `
platform:
  base_url: \${PLATFORM_BASE_URL}
  form: earlier
  auth: { scheme: bearer-secret, secret: ${SECRET} }
receiver:
  host: 127.0.0.1
  port: \${PORT}
  secrets: [ "${WEBHOOK_SECRET}" ]
redis:
  url: \${REDIS_URL}
  prefix: rate
worker:
  concurrency: 16
log:
  level: warn
rules:
  - name: log-every-message
    on: message_in
    then: [ { note: "seen {{event.messageId}}" } ]
`;

export async function runRateBudgetBench(): Promise<RateBudgetResult> {
  const dir = await mkdtemp(join(tmpdir(), 'convo-bridge-rate-'));
  const children: ChildProcess[] = [];
  let redis: RedisServerHandle | undefined;
  try {
    redis = process.env.REDIS_URL ? undefined : await startRedisServer({ appendOnly: true });
    const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
    const conversations = Array.from({ length: 50 }, (_, i) => ({ id: `rc-${i}`, channel: 'telegram' }));
    await writeFile(join(dir, 'seed.json'), JSON.stringify({ conversations }));
    await writeFile(join(dir, 'bridge.yaml'), CONFIG);
    const emulatorPort = await findFreePort();
    const emulatorUrl = `http://127.0.0.1:${emulatorPort}`;
    children.push(
      spawnNode(
        [
          CLI,
          'emulator',
          '--port',
          String(emulatorPort),
          '--form',
          'earlier',
          '--business-id',
          'rate-biz',
          '--secret',
          SECRET,
          '--seed',
          join(dir, 'seed.json'),
          '--rate-limit',
          `${LIMIT_PER_MINUTE}/10`,
        ],
        {},
      ).child,
    );
    await waitFor(
      () =>
        fetch(`${emulatorUrl}/health`).then(
          (r) => r.status < 500,
          () => false,
        ),
      {
        timeoutMs: 20_000,
        what: 'the emulator',
      },
    );
    const port = await findFreePort();
    children.push(
      spawnNode([CLI, 'start', '--config', join(dir, 'bridge.yaml')], {
        PLATFORM_BASE_URL: emulatorUrl,
        PORT: String(port),
        REDIS_URL: redisUrl,
      }).child,
    );
    await waitUntilOk(`http://127.0.0.1:${port}/readyz`, 'the bridge');
    // More work than the budget serves in the measured time (each event needs one note).
    const events = Math.ceil((LIMIT_PER_MINUTE * SECONDS) / 60) + 60;
    const started = Date.now();
    for (let i = 0; i < events; i++) {
      const body = JSON.stringify({
        event: 'message.incoming',
        timestamp: Math.floor(Date.now() / 1000),
        conversation_id: `rc-${i % conversations.length}`,
        message: {
          id: `rate-${i}`,
          sender_name: 'Pelanggan',
          channel: { id: 'ch_tg', name: 'Telegram', engine: 'telegram' },
          content: { type: 'text', text: `halo ${i}` },
        },
      });
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/platform`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: WEBHOOK_SECRET },
        body,
      });
      if (!response.ok) throw new Error(`webhook ${i}: HTTP ${response.status}`);
    }
    await waitFor(() => Date.now() - started >= SECONDS * 1000, {
      timeoutMs: SECONDS * 1000 + 10_000,
      intervalMs: 500,
      what: 'the measured period',
    });
    const { requests } = (await (await fetch(`${emulatorUrl}/_emulator/requests?limit=1000000`)).json()) as {
      requests: { at: string; endpoint: string | null; rc: number | null; httpStatus: number | null }[];
    };
    const inWindow = requests.filter(
      (r) => r.endpoint !== 'health' && Date.parse(r.at) - started <= SECONDS * 1000,
    );
    const rejected429 = inWindow.filter((r) => r.rc === 429 || r.httpStatus === 429).length;
    const accepted = inWindow.length - rejected429;
    const allowed = (LIMIT_PER_MINUTE * SECONDS) / 60;
    return {
      seconds: SECONDS,
      limitPerMinute: LIMIT_PER_MINUTE,
      accepted,
      allowed,
      rejected429,
      budgetUsedPct: Math.round((accepted / allowed) * 1000) / 10,
      rateLimitedPct: inWindow.length === 0 ? 0 : Math.round((rejected429 / inWindow.length) * 1000) / 10,
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runRateBudgetBench();
  console.log(
    `rate budget (earlier form, ${result.limitPerMinute}/min, ${result.seconds} s): ${result.accepted} of ${result.allowed} allowed calls used ` +
      `(${result.budgetUsedPct}%), ${result.rejected429} answered 429 (${result.rateLimitedPct}%)`,
  );
  await mkdir(join(here, 'results'), { recursive: true });
  await writeFile(
    join(here, 'results', 'rate-budget.json'),
    `${JSON.stringify({ ...result, at: new Date().toISOString() }, null, 2)}\n`,
  );
}
