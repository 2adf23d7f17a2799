import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { describeError } from '../base/errors.js';
import { type RunningBridge, runBridge } from '../bridge/run-bridge.js';
import { loadConfig } from '../config/load-config.js';
import { type EmulatorHandle, startEmulator } from '../emulator/start-emulator.js';
import { createLogger } from '../observe/logger.js';
import { readOnlyQueue } from '../queue/read-only-queue.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import { type CrmSink, startCrmSink } from './crm-sink.js';
import { createDemoClock, type DemoClock } from './demo-clock.js';
import { DemoError } from './demo-error.js';
import { type DemoMorning, pickDemoMorning } from './demo-morning.js';
import { ESCALATION_RULE } from './demo-script.js';
import { type DemoRedis, provideRedis } from './provide-redis.js';

/** Seed of the emulator's fault RNG: with it, the 503-after-send fault hits the same sends every run. */
export const DEMO_FAULT_SEED = 20_260_411;

export const DEFAULT_DEMO_CONFIG = fileURLToPath(new URL('../../config/demo.yaml', import.meta.url));

/** What stops the demo's parts: each start pushes its stop; they run in reverse. */
export type DemoCleanups = (() => Promise<unknown>)[];

/** Everything the demo started, and what it needs to play the script and read the outcome. */
export interface DemoWorld {
  redis: DemoRedis;
  /** The run's key prefix (unique, so a shared Redis is never disturbed). */
  prefix: string;
  /** The demo's own Redis connection (dead letters, queue counts), apart from the bridge's. */
  control: Redis;
  eventsQueue: Queue;
  timersQueue: Queue;
  /** The folder of the bridge's log: removed at the end unless `keep` is set (a failed run). */
  workDir: { path: string; keep: boolean };
  logFile: string;
  credentials: DemoCredentials;
  morning: DemoMorning;
  clock: DemoClock;
  /** The escalation timer's delay (config/demo.yaml). */
  timerMs: number;
  emulator: EmulatorHandle;
  crm: CrmSink;
  bridge: RunningBridge;
  bridgeUrl: string;
  webhookUrl: string;
}

interface DemoCredentials {
  businessId: string;
  secret: string;
  webhookSecret: string;
  crmSecret: string;
  adminPassword: string;
}

const secret = (bytes = 12) => randomBytes(bytes).toString('hex');

/**
 * Starts Redis (or uses REDIS_URL), the platform emulator, a CRM sink and the bridge with the demo
 * config, on the script's simulated morning. Every part pushes its stop onto `cleanups`.
 */
export async function startDemoWorld(
  options: { env: NodeJS.ProcessEnv; port?: number; configPath: string; realNow: () => number },
  cleanups: DemoCleanups,
): Promise<DemoWorld> {
  const redis: DemoRedis = await provideRedis(options.env);
  cleanups.push(() => redis.stop());
  const prefix = `cb-demo-${secret(4)}`;
  // Cleanups run in reverse: the bridge stops first, then the emulator and the CRM sink, then the
  // demo's own Redis connection (deleting the run's keys from a shared Redis), then Redis itself.
  const control = new Redis(redis.url, { maxRetriesPerRequest: null });
  control.on('error', () => {});
  cleanups.push(async () => {
    if (redis.source === 'REDIS_URL') await deleteKeys(control, `${prefix}:`);
    await control.quit();
  });
  // Read only (counts): the bridge's own queues write the meta hash (its event stream length).
  const eventsQueue = readOnlyQueue(QUEUE_NAMES.events, control, prefix);
  const timersQueue = readOnlyQueue(QUEUE_NAMES.timers, control, prefix);
  cleanups.push(() => Promise.all([eventsQueue.close(), timersQueue.close()]));
  const workDir = { path: await mkdtemp(join(tmpdir(), 'convo-bridge-demo-')), keep: true };
  const logFile = join(workDir.path, 'bridge.log');
  // The folder (the bridge's log) goes when the demo ends well; a failed run keeps it to be read.
  // Pushed before the bridge's cleanup, so it runs after the bridge has stopped writing.
  cleanups.push(async () => {
    if (!workDir.keep) await rm(workDir.path, { recursive: true, force: true });
  });
  const credentials: DemoCredentials = {
    businessId: 'toko-maju',
    secret: secret(),
    webhookSecret: secret(),
    crmSecret: secret(16),
    adminPassword: secret(6),
  };

  // The config is read once up front for what the script depends on (holidays, the timer).
  const baseEnv: NodeJS.ProcessEnv = {
    PLATFORM_FORM: 'current',
    BUSINESS_ID: credentials.businessId,
    SECRET_KEY: credentials.secret,
    PORT: String(options.port ?? 0),
    WEBHOOK_SECRET: credentials.webhookSecret,
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    ADMIN_PASSWORD: credentials.adminPassword,
    LOG_LEVEL: 'info',
    CRM_SECRET: credentials.crmSecret,
  };
  const preview = await loadConfig(options.configPath, { env: baseEnv });
  const timerMs = escalationTimerMs(preview.config.rules);
  const morning: DemoMorning = pickDemoMorning(options.realNow(), {
    holidays: preview.config.businessHours?.holidays ?? [],
  });
  const clock = createDemoClock(morning.at('07:35', -1), options.realNow);

  const emulator = await startDemoEmulator(credentials, clock);
  cleanups.push(() => emulator.close());
  const crm: CrmSink = await startCrmSink({ secret: credentials.crmSecret });
  cleanups.push(() => crm.close());
  const bridge = await startDemoBridge({
    configPath: options.configPath,
    env: { ...baseEnv, PLATFORM_BASE_URL: emulator.url, CRM_WEBHOOK_URL: crm.url },
    clock,
    logFile,
  });
  cleanups.push(() => bridge.stop('demo finished'));
  const bridgeUrl = bridge.url ?? '';
  const webhookUrl = `${bridgeUrl}${bridge.config.config.receiver.path}`;
  emulator.admin.setWebhook({ url: webhookUrl, secret: credentials.webhookSecret });
  return {
    redis,
    prefix,
    control,
    eventsQueue,
    timersQueue,
    workDir,
    logFile,
    credentials,
    morning,
    clock,
    timerMs,
    emulator,
    crm,
    bridge,
    bridgeUrl,
    webhookUrl,
  };
}

/** The escalation timer's delay from the config: the script needs one that fires during the run. */
function escalationTimerMs(rules: readonly { name: string; actions: readonly { type: string }[] }[]): number {
  const rule = rules.find((r) => r.name === ESCALATION_RULE);
  const timer = rule?.actions.find((a): a is { type: 'after'; delayMs: number } => a.type === 'after');
  if (!timer || timer.delayMs > 60_000) {
    throw new DemoError(
      'DEMO_SCRIPT_INVALID',
      `the demo expects rule ${ESCALATION_RULE} in config/demo.yaml to have an \`after:\` timer of at most 60s ` +
        '(it waits for it to fire): restore `after: 20s`',
    );
  }
  return timer.delayMs;
}

async function startDemoEmulator(credentials: DemoCredentials, clock: DemoClock): Promise<EmulatorHandle> {
  try {
    return await startEmulator({
      businessId: credentials.businessId,
      secret: credentials.secret,
      businessName: 'Toko Maju',
      form: 'current',
      now: clock.now,
      seed: DEMO_FAULT_SEED,
      webhookRetryDelaysMs: [250, 500, 1000],
    });
  } catch (error) {
    throw new DemoError('DEMO_START_FAILED', `the emulator did not start: ${describeError(error)}`, {
      cause: error,
    });
  }
}

/** The bridge of the demo (`start` mode), on the simulated clock, logging to `logFile`. */
async function startDemoBridge(options: {
  configPath: string;
  env: NodeJS.ProcessEnv;
  clock: DemoClock;
  logFile: string;
}): Promise<RunningBridge> {
  const { configPath, env, clock, logFile } = options;
  const logger = createLogger({
    level: 'info',
    pretty: false,
    destination: pino.destination({ dest: logFile, sync: true, mkdir: true }),
  });
  try {
    return await runBridge({
      mode: 'start',
      configPath,
      env,
      handleSignals: false,
      now: clock.date,
      logger,
      // The demo's config takes the bridge's port from its own --port (PORT).
      portSetting: { setting: 'demo --port', change: 'pass another --port, or none for any free port' },
    });
  } catch (error) {
    throw new DemoError(
      'DEMO_START_FAILED',
      `the bridge did not start: ${describeError(error)} (log: ${logFile})`,
      { cause: error },
    );
  }
}

/** Deletes the run's keys from a shared Redis (SCAN, never KEYS). */
async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let rounds = 0; rounds < 10_000; rounds += 1) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}
