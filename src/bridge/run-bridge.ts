import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { describeError } from '../base/errors.js';
import type { ConfigError } from '../config/config-error.js';
import { describeConfigDefaults } from '../config/describe-defaults.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { watchConfig } from '../config/watch-config.js';
import { createLogger } from '../observe/logger.js';
import { setUpTracing } from '../observe/set-up-tracing.js';
import { bridgeJobOptions } from '../queue/job-options.js';
import { layoutFor } from '../queue/key-layout.js';
import { claimLayout, LayoutMismatchError } from '../queue/layout-record.js';
import { createReceiver, type Receiver } from '../receive/create-receiver.js';
import { receiverOptionsFromConfig } from '../receive/receiver-options.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisClient, describeTopology } from '../redis/redis-connection.js';
import { type ComposedWorker, composeWorker } from './compose-worker.js';
import { registerQueueGauges } from './queue-gauges.js';
import { createOutageReporter, quietConnectionErrors } from './redis-outage.js';

export type BridgeMode = 'start' | 'serve' | 'work';

export interface RunBridgeOptions {
  mode: BridgeMode;
  configPath: string;
  env?: NodeJS.ProcessEnv;
  /** `work` only: serve /healthz, /readyz and /metrics on this port (none when omitted). */
  port?: number;
  logger?: Logger;
  /** Install SIGTERM/SIGINT handlers (the CLI does; tests that embed the bridge may not). */
  handleSignals?: boolean;
  /** Stall window for readiness: jobs waiting and no progress for this long means not ready. */
  stallWindowMs?: number;
  /** The worker's clock (rules, windows). Only the demo's simulated morning sets it. */
  now?: () => Date;
  /** While Redis is unreachable, one warning per this interval (default 30 s). */
  outageReportIntervalMs?: number;
}

/** How long a start waits for the worker to connect before carrying on without it. */
const WORKER_START_WAIT_MS = 3_000;
/** Longest wait for each part to close when Redis is unreachable at shutdown. */
const UNREACHABLE_CLOSE_MS = 2_000;

export interface RunningBridge {
  /** Where the receiver (or the worker's health server) listens; null when nothing does. */
  url: string | null;
  config: LoadedConfig;
  /** Graceful stop: readiness false, HTTP drained, in-flight jobs finished (up to the grace), connections closed. */
  stop(reason?: string): Promise<void>;
  /** Resolves with the exit code once the bridge has stopped. */
  stopped: Promise<number>;
}

/**
 * The composition root of `convo-bridge start | serve | work`: reads the config once and builds
 * the receiver and/or the worker with one logger, one metrics registry and one shutdown path.
 */
export async function runBridge(options: RunBridgeOptions): Promise<RunningBridge> {
  const env = options.env ?? process.env;
  const loaded = await loadConfig(options.configPath, { env });
  const { config } = loaded;
  const baseLogger = options.logger ?? createLogger({ level: config.log.level });
  const address = describeTopology(config.redis.topology);
  // Redis down must not flood the log (issue 13): one report per interval from the control
  // connection below; the same errors from the other connections are dropped meanwhile.
  const outageIntervalMs = options.outageReportIntervalMs ?? 30_000;
  const outage = createOutageReporter({ address, intervalMs: outageIntervalMs });
  const logger = quietConnectionErrors(baseLogger, { isDown: outage.isDown, intervalMs: outageIntervalMs });
  const log = logger.child({ mode: options.mode });
  // Issue 12: say at start-up which defaults the config relies on (unmapped WhatsApp channels...).
  for (const line of describeConfigDefaults(config)) log.info(`config default: ${line}`);
  // Off by default; when on, installed before the receiver and the worker are built (issue 14).
  const tracing = await setUpTracing(config.tracing, env, { mode: options.mode, log });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'convo_bridge_' });
  const reloads = new Counter({
    name: 'convo_bridge_config_reloads_total',
    help: 'Config reloads by result (ok: new rules in force; invalid: old rules kept).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const layout = layoutFor(config.redis);
  const keys = layout.global;
  const redis = createRedisClient(config.redis.topology, {
    maxRetriesPerRequest: 1,
    connectionName: 'convo-bridge:control',
    // Reconnect at most 1 s apart, so the bridge notices soon that Redis is back.
    retryStrategy: (times) => Math.min(times * 100, 1_000),
  });
  redis.on('error', (error: Error) => {
    const warning = outage.down(describeError(error));
    if (warning) log.warn({ redis: address }, warning);
  });
  redis.on('ready', () => {
    const back = outage.up();
    if (back) log.info({ redis: address }, back);
    // Checked on every (re)connection: the Redis that came back may be another one.
    void checkRedisPolicy(redis, log);
  });

  // Events may be stored and taken only once this Redis is known to hold the layout the config
  // asks for (shard count and key tags): else one conversation's events would land in two shards.
  let shuttingDown = false;
  let layoutProblem: Error | undefined;
  const layoutChecked = (async () => {
    for (;;) {
      try {
        await claimLayout(redis, layout);
        return;
      } catch (error) {
        if (error instanceof LayoutMismatchError) {
          layoutProblem = error;
          throw error;
        }
        // Redis not reachable yet: try again (the outage reporter says so in the log).
        await new Promise((resolve) => setTimeout(resolve, 500).unref());
        if (shuttingDown) throw error;
      }
    }
  })();
  layoutChecked.catch(() => undefined); // handled below, once stop() exists

  const runsWorker = options.mode !== 'serve';
  const runsReceiver = options.mode !== 'work';
  let composed: ComposedWorker | undefined;
  let receiver: Receiver | undefined;
  let lastProgressAt = Date.now();
  // A start that fails half-way (a port in use) must not leave the parts already running holding
  // the process open: close them, then report the error.
  const failStart = async (error: unknown): Promise<never> => {
    await receiver?.close().catch(() => undefined);
    await composed?.close(0).catch(() => undefined);
    redis.disconnect();
    throw error;
  };
  if (runsWorker) {
    const now = options.now ?? testClock(env, log);
    composed = composeWorker(config, loaded.rules, {
      logger: log,
      registry,
      ...(now ? { now } : {}),
    });
    for (const queue of composed.worker.queues.flatMap((q) => [q.events, q.timers])) {
      // Without a listener BullMQ prints every connection error with its stack on stderr.
      queue.on('error', (error: Error) => log.warn({ err: error.message }, `${queue.name} queue error`));
    }
    // With Redis down the workers wait for it (and start taking jobs by themselves once it is
    // back) while the receiver and the health endpoints come up: never block the start on Redis.
    let workerStarted = false;
    const worker = composed.worker;
    void layoutChecked
      .then(() => worker.start())
      .then(
        () => {
          workerStarted = true;
          log.info(
            { concurrency: config.worker.concurrency, rules: loaded.rules.rules.length },
            'worker started',
          );
        },
        (error: unknown) => {
          if (!(error instanceof LayoutMismatchError)) {
            log.error({ err: describeError(error) }, 'the worker could not start');
          }
        },
      );
    setTimeout(() => {
      if (!workerStarted && !shuttingDown) {
        log.warn(
          { redis: address },
          `the worker is waiting for Redis at ${address}; it starts taking jobs by itself once Redis answers`,
        );
      }
    }, WORKER_START_WAIT_MS).unref();
  }
  const queuesForGauges = composed ? composed.worker.queues.flatMap((q) => [q.events, q.timers]) : [];
  const eventQueues = composed ? composed.worker.queues.map((q) => q.events) : [];
  const sumOf = async (read: (queue: (typeof eventQueues)[number]) => Promise<number>) =>
    (await Promise.all(eventQueues.map(read))).reduce((a, b) => a + b, 0);
  registerQueueGauges(registry, queuesForGauges, redis, keys);

  const stallWindowMs = options.stallWindowMs ?? 120_000;
  const readiness = async (): Promise<string | null> => {
    if (shuttingDown) return 'shutting down';
    if (layoutProblem) return layoutProblem.message;
    if (outage.isDown() || redis.status !== 'ready') return `Redis at ${address} does not answer`;
    if (!composed) return null;
    const waiting = await withDeadline(
      sumOf((queue) => queue.getWaitingCount()),
      2_000,
    ).catch(() => null);
    if (waiting === null) return `Redis at ${address} does not answer`;
    if (waiting === 0) {
      lastProgressAt = Date.now();
      return null;
    }
    if (!composed.worker.isRunning())
      return `the worker has stopped taking jobs while ${waiting} are waiting`;
    const completed = await sumOf((queue) => queue.getCompletedCount()).catch(() => 0);
    if (completed !== lastCompleted) {
      lastCompleted = completed;
      lastProgressAt = Date.now();
    }
    const rateLimited = (await sumOf((queue) => queue.getRateLimitTtl()).catch(() => 0)) > 0;
    if (!rateLimited && Date.now() - lastProgressAt > stallWindowMs) {
      return `no job finished for ${Math.round((Date.now() - lastProgressAt) / 1000)} s while ${waiting} are waiting`;
    }
    return null;
  };
  let lastCompleted = -1;

  let url: string | null = null;
  let closeHttp: (() => Promise<void>) | undefined;
  if (runsReceiver) {
    // bull-board (and its UI assets) only when the dashboard is on: it is most of an idle
    // bridge's memory otherwise.
    const admin = config.admin.password && composed ? await import('./admin-routes.js') : undefined;
    receiver = createReceiver({
      ...receiverOptionsFromConfig(config),
      layout,
      layoutChecked,
      jobOptions: bridgeJobOptions({ attempts: config.worker.attempts }),
      logger: log,
      metrics: registry,
      readiness,
      routes: (app) => {
        if (composed && admin?.mountAdmin(app, queuesForGauges, config.admin)) {
          log.info('bull-board at /admin/queues (basic auth)');
        }
      },
    });
    const listening = await receiver.listen(config.receiver.port, config.receiver.host).catch(failStart);
    url = listening.url;
    closeHttp = listening.close;
    log.info({ url: `${url}${config.receiver.path}` }, 'receiver listening');
  } else if (options.port !== undefined) {
    const server = await healthServer(options.port, config.receiver.host, registry, readiness).catch(
      failStart,
    );
    const address = server.address() as AddressInfo;
    url = `http://${config.receiver.host}:${address.port}`;
    closeHttp = () => new Promise<void>((resolve) => server.close(() => resolve()));
  }

  const watcher = watchConfig(options.configPath, {
    env,
    onReload: (next) => {
      composed?.setRules(next.rules);
      reloads.inc({ result: 'ok' });
      log.info({ rules: next.rules.rules.length }, 'config reloaded: new rules in force');
      if (
        JSON.stringify(next.config.receiver) !== JSON.stringify(config.receiver) ||
        JSON.stringify(next.config.redis) !== JSON.stringify(config.redis)
      ) {
        log.warn('receiver and redis settings changed too: they take effect after a restart');
      }
    },
    onError: (error: ConfigError) => {
      reloads.inc({ result: 'invalid' });
      log.error(
        { problems: error.issues.length },
        `config change rejected, the previous rules stay in force:\n${error.message}`,
      );
    },
    sighup: options.handleSignals ?? false,
  });

  let resolveStopped: (code: number) => void = () => {};
  const stopped = new Promise<number>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  let exitCode = 0;
  const stop = (reason = 'stop requested') => {
    stopping ??= (async () => {
      shuttingDown = true;
      log.info({ reason }, 'shutting down: readiness off, draining HTTP, finishing in-flight jobs');
      watcher.close();
      await closeHttp?.().catch((error: unknown) => log.warn({ err: describeError(error) }, 'HTTP drain'));
      // Without Redis no job can finish (every step writes to it) and closing connections waits
      // for a reconnect that may never come: stop at once, bounded; unfinished jobs are retried.
      const redisAway = outage.isDown() || redis.status !== 'ready';
      if (redisAway) log.warn({ redis: address }, 'Redis is unreachable: not waiting for in-flight jobs');
      const bound = redisAway ? UNREACHABLE_CLOSE_MS : Number.POSITIVE_INFINITY;
      await settleWithin(
        receiver
          ?.close()
          .catch((error: unknown) => log.warn({ err: describeError(error) }, 'receiver close')),
        bound,
      );
      await settleWithin(
        composed
          ?.close(redisAway ? 0 : undefined)
          .catch((error: unknown) => log.warn({ err: describeError(error) }, 'worker close')),
        bound,
      );
      if (redis.status === 'ready') await redis.quit().catch(() => undefined);
      else redis.disconnect();
      await tracing?.shutdown();
      log.info('stopped');
      resolveStopped(exitCode);
    })();
    return stopping;
  };

  layoutChecked.catch((error: unknown) => {
    if (!(error instanceof LayoutMismatchError)) return;
    log.error({ code: error.code }, error.message);
    exitCode = 2;
    void stop('the Redis key layout does not match the config');
  });

  if (options.handleSignals) {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) {
        log.warn(
          { signal },
          'second signal: exiting now without waiting (unfinished jobs are retried later)',
        );
        process.exit(1);
      }
      void stop(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    void stopped.then(() => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    });
  }

  return { url, config: loaded, stop, stopped };
}

/** Durable-before-ack needs Redis to keep what it took: say so loudly when it may evict keys. */
async function checkRedisPolicy(redis: RedisClient, log: Logger): Promise<void> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy && policy !== 'noeviction') {
      log.error(
        { policy },
        `Redis maxmemory-policy is "${policy}": under memory pressure Redis may EVICT queued events and ` +
          'dedupe keys, losing or repeating work. Set `maxmemory-policy noeviction` (BullMQ requires it).',
      );
    }
  } catch (error) {
    log.warn(
      { err: describeError(error) },
      'could not read Redis maxmemory-policy (CONFIG may be disabled); make sure it is noeviction',
    );
  }
}

async function healthServer(
  port: number,
  host: string,
  registry: Registry,
  readiness: () => Promise<string | null>,
): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const reason = await readiness();
    if (reason) res.status(503).json({ status: 'unavailable', error: reason });
    else res.json({ status: 'ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.set('content-type', registry.contentType).send(await registry.metrics());
  });
  app.use((_req, res) => {
    res
      .status(404)
      .json({ success: false, error: 'not found: /healthz, /readyz and /metrics are served here' });
  });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** Rejects when `promise` has not settled within `ms` (a Redis command waiting for a reconnect). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Waits for `promise` for at most `ms` (never rejects: callers log their own errors). */
/**
 * TEST ONLY: `CONVO_BRIDGE_TEST_CLOCK_OFFSET_MS` shifts the worker's clock (rules, windows,
 * business-time timers) by that many milliseconds, so an end-to-end test can start a bridge at a
 * chosen wall-clock moment (a Friday evening) and watch a timer fire at a real instant (issue 16).
 * Never set it in production: replies would be judged against a wrong clock.
 */
export const TEST_CLOCK_ENV = 'CONVO_BRIDGE_TEST_CLOCK_OFFSET_MS';

function testClock(env: NodeJS.ProcessEnv, log: Logger): (() => Date) | undefined {
  const text = env[TEST_CLOCK_ENV];
  if (text === undefined || text === '') return undefined;
  const offset = Number(text);
  if (!Number.isSafeInteger(offset)) {
    throw new Error(
      `${TEST_CLOCK_ENV}=${JSON.stringify(text)} is not a whole number of milliseconds: unset it (it is for tests only)`,
    );
  }
  log.warn({ offsetMs: offset }, `${TEST_CLOCK_ENV} is set: the worker's clock is shifted (tests only)`);
  return () => new Date(Date.now() + offset);
}

async function settleWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (promise === undefined) return;
  if (!Number.isFinite(ms)) {
    await promise;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
