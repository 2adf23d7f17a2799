import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { bridgeKeys, QUEUE_NAMES } from '../../../src/queue/redis-keys.js';
import { type RedisServerHandle, startRedisServer } from '../../../src/shared/start-redis-server.js';
import {
  type BridgeProcess,
  type CrmSink,
  type ExampleEdits,
  exampleConfig,
  findFreePort,
  spawnBridge,
  startCrmSink,
  writeTempConfig,
} from '../../support/bridge-harness.js';
import { type EmulatorProcess, startEmulatorProcess } from './emulator-process.js';
import { waitUntil } from './wait-until.js';

export const FAULTS = {
  businessId: 'biz-faults',
  secret: 'sk-faults-secret',
  webhookSecret: 'wh-faults-secret',
  crmSecret: 'crm-faults-secret',
  path: '/webhooks/platform',
  prefix: 'faults',
} as const;

export type BridgeMode = 'start' | 'serve' | 'work';

export interface FaultWorldOptions {
  config: ExampleEdits;
  processes: BridgeMode[];
  randomSeed: number;
  webhookRetryDelaysMs?: readonly [number, number, number];
  /** Aborted when the scenario is out of budget: every process of the world is killed at once. */
  signal: AbortSignal;
  /** Give every `work` process a port for /metrics and /readyz (`work --port`). */
  workMetrics?: boolean;
  /** More flags for the emulator process (e.g. `--image-links`). */
  emulatorArgs?: readonly string[];
}

/**
 * One scenario's world, every part a real process except the CRM sink: a private `redis-server`
 * with the append-only file on, the emulator (`node dist/cli.js emulator`), and convo-bridge
 * processes (`node dist/cli.js start|serve|work`) configured from config/bridge.example.yaml.
 * Nothing here touches the shared Redis on 6379; everything listens on 127.0.0.1.
 */
export async function createFaultWorld(options: FaultWorldOptions) {
  const redisServer: RedisServerHandle = await startRedisServer({ appendOnly: true });
  const cleanups: (() => Promise<unknown>)[] = [() => redisServer.stop()];
  let closed: Promise<void> | undefined;
  const cleanup = () => {
    closed ??= (async () => {
      for (const step of cleanups.reverse()) await step().catch(() => undefined);
    })();
    return closed;
  };
  const onAbort = () => void cleanup();
  options.signal.addEventListener('abort', onAbort, { once: true });
  cleanups.push(async () => options.signal.removeEventListener('abort', onAbort));
  try {
    const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null, connectionName: 'faults-suite' });
    redis.on('error', () => {});
    const eventsQueue = new Queue(QUEUE_NAMES.events, { connection: redis, prefix: FAULTS.prefix });
    // Redis is killed on purpose in one scenario: connection errors are expected, not news.
    eventsQueue.on('error', () => {});
    cleanups.push(async () => {
      await eventsQueue.close();
      redis.disconnect();
    });
    const crm = await startCrmSink(FAULTS.crmSecret);
    cleanups.push(() => crm.close());
    const receiverPort = await findFreePort();
    const receiverUrl = `http://127.0.0.1:${receiverPort}${FAULTS.path}`;
    const emulator: EmulatorProcess = await startEmulatorProcess({
      businessId: FAULTS.businessId,
      secret: FAULTS.secret,
      webhookUrl: receiverUrl,
      webhookSecret: FAULTS.webhookSecret,
      randomSeed: options.randomSeed,
      webhookRetryDelaysMs: options.webhookRetryDelaysMs ?? [500, 1000, 2000],
      requestLogSize: 1_000_000,
      deliveryLogSize: 200_000,
      ...(options.emulatorArgs ? { extraArgs: options.emulatorArgs } : {}),
    });
    cleanups.push(() => emulator.stop());
    const file = await writeTempConfig(await exampleConfig(options.config));
    cleanups.push(() => file.cleanup());
    const env: Record<string, string> = {
      PLATFORM_BASE_URL: emulator.url,
      BUSINESS_ID: FAULTS.businessId,
      SECRET_KEY: FAULTS.secret,
      WEBHOOK_SECRET: FAULTS.webhookSecret,
      PORT: String(receiverPort),
      REDIS_URL: redisServer.url,
      REDIS_PREFIX: FAULTS.prefix,
      CRM_WEBHOOK_URL: crm.url,
      CRM_SECRET: FAULTS.crmSecret,
    };
    const bridges: BridgeProcess[] = [];
    const metricsOrigins = new Map<BridgeProcess, string>();
    cleanups.push(() => Promise.allSettled(bridges.map((b) => b.stop('SIGKILL'))));
    const launch = async (mode: BridgeMode) => {
      const port = mode === 'work' && options.workMetrics ? await findFreePort() : undefined;
      const bridge = await spawnBridge(
        mode,
        file.path,
        env,
        port === undefined ? [] : ['--port', String(port)],
      );
      bridges.push(bridge);
      if (port !== undefined) metricsOrigins.set(bridge, `http://127.0.0.1:${port}`);
      else if (mode !== 'work') metricsOrigins.set(bridge, `http://127.0.0.1:${receiverPort}`);
      return bridge;
    };
    await Promise.all(options.processes.map((mode) => launch(mode)));

    const keys = bridgeKeys(FAULTS.prefix);
    const world = {
      redisServer,
      redis,
      keys,
      crm,
      emulator,
      admin: emulator.admin,
      receiverUrl,
      receiverOrigin: `http://127.0.0.1:${receiverPort}`,
      bridges,
      launch,
      signal: options.signal,
      /** waitFor with a deadline that also stops when the scenario is aborted. */
      waitUntil<T>(
        probe: () => T | undefined | false | Promise<T | undefined | false>,
        wait: { timeoutMs: number; what: string; intervalMs?: number },
      ): Promise<T> {
        return waitUntil(probe, { ...wait, signal: options.signal });
      },
      /** Where a bridge process serves /metrics (serve and start: the receiver's port). */
      metricsOrigin(bridge: BridgeProcess): string | undefined {
        return metricsOrigins.get(bridge);
      },
      /** Bridge processes that still run, of one mode. */
      running(mode?: BridgeMode) {
        return bridges.filter(
          (b) =>
            b.proc.exitCode === null &&
            b.proc.signalCode === null &&
            (mode === undefined || b.proc.spawnargs.includes(mode)),
        );
      },
      /** Events jobs not finished yet (waiting, running, parked behind their conversation, backing off). */
      async pendingJobs(): Promise<number> {
        const counts = await eventsQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).reduce((sum, n) => sum + n, 0);
      },
      /**
       * Waits until the platform has nothing left to deliver and the bridge nothing left to do, and
       * both stay so for a moment (a retried webhook may still be on its way).
       */
      async settle(timeoutMs: number, what: string): Promise<void> {
        let quietSince: number | null = null;
        await world.waitUntil(
          async () => {
            const pending = await world.pendingJobs();
            const deliveries = pending === 0 ? await emulator.admin.deliveries() : [];
            const busy =
              pending > 0 || deliveries.some((d) => d.state === 'queued' || d.state === 'delivering');
            if (busy) {
              quietSince = null;
              return false;
            }
            quietSince ??= Date.now();
            return Date.now() - quietSince >= 1_500;
          },
          { timeoutMs, intervalMs: 500, what },
        );
      },
      /**
       * BullMQ's bookkeeping of every events job still kept: runs started (`ats`, parking behind
       * the conversation and rate-limit pauses included) and attempts made (`atm`, failed runs).
       */
      async jobStats(): Promise<{ id: string; started: number; attempts: number }[]> {
        const stats: { id: string; started: number; attempts: number }[] = [];
        const jobPrefix = `${FAULTS.prefix}:${QUEUE_NAMES.events}:`;
        let cursor = '0';
        for (let pages = 0; pages < 100_000; pages++) {
          const [next, found] = await redis.scan(cursor, 'MATCH', `${jobPrefix}ev-*`, 'COUNT', 1000);
          const jobKeys = found.filter((key) => !key.slice(jobPrefix.length).includes(':'));
          const pipeline = redis.pipeline();
          for (const key of jobKeys) pipeline.hmget(key, 'ats', 'atm');
          const rows = (await pipeline.exec()) ?? [];
          jobKeys.forEach((key, i) => {
            const values = (rows[i]?.[1] ?? []) as (string | null)[];
            stats.push({
              id: key.slice(jobPrefix.length),
              started: Number(values[0] ?? 0),
              attempts: Number(values[1] ?? 0),
            });
          });
          cursor = next;
          if (cursor === '0') break;
        }
        return stats;
      },
      async deadLetters(): Promise<number> {
        return redis.zcard(keys.deadIndex);
      },
      close: cleanup,
    };
    return world;
  } catch (error) {
    await cleanup();
    throw error;
  }
}
export type FaultWorld = Awaited<ReturnType<typeof createFaultWorld>>;
export type { CrmSink };
