import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import type { ApiDeps } from '../api/api-deps.js';
import { describeError } from '../base/errors.js';
import { redactUrl } from '../base/redact-url.js';
import type { ConfigError } from '../config/config-error.js';
import { formatConfigIssue } from '../config/config-error.js';
import type { BridgeConfig } from '../config/config-schema.js';
import { describeConfigDefaults } from '../config/describe-defaults.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { type ConfigWatcher, watchConfig } from '../config/watch-config.js';
import { createLogger } from '../observe/logger.js';
import { setUpTracing, type TracingHandle } from '../observe/set-up-tracing.js';
import { type KeyLayout, layoutFor } from '../queue/key-layout.js';
import { LayoutMismatchError } from '../queue/layout-record.js';
import { createReceiver, type Receiver } from '../receive/create-receiver.js';
import { receiverOptionsFromConfig } from '../receive/receiver-options.js';
import { RedisDatabaseError } from '../redis/database-guard.js';
import type { RedisClient } from '../redis/redis-client.js';
import { describeTopology } from '../redis/redis-connection.js';
import { createStoryReader } from '../story/story-reader.js';
import type { BridgeState } from './bridge-state.js';
import {
  businessReadiness,
  businessSetups,
  describeBusinessChange,
  heldLabel,
  receiverBusinesses,
} from './businesses.js';
import { type BusinessSetup, type ComposedWorker, composeWorker } from './compose-worker.js';
import { connectControlRedis } from './control-redis.js';
import { startHealthServer } from './health-server.js';
import { claimLayoutInBackground } from './layout-claim.js';
import { explainListenFailure } from './listen-error.js';
import { registerQueueGauges } from './queue-gauges.js';
import { createReadiness } from './readiness.js';
import { registerRedisGauges } from './redis-gauges.js';
import { createOutageReporter, type OutageReporter, quietConnectionErrors } from './redis-outage.js';
import { type ReplicaCheck, watchReplicas } from './replica-check.js';
import { createShutdown, type Shutdown, stopOnSignals } from './shutdown.js';
import { buildAdmin } from './start-admin.js';
import { testClock } from './test-clock.js';

export type BridgeMode = 'start' | 'serve' | 'work';

export interface RunBridgeOptions {
  mode: BridgeMode;
  configPath: string;
  env?: NodeJS.ProcessEnv;
  /** `work` only: serve /healthz, /readyz and /metrics on this port (none when omitted). */
  port?: number;
  /**
   * Where the receiver's port came from, for the error of a taken port, when not the config's own
   * `receiver.port` (the demo sets it from its `--port`).
   */
  portSetting?: { setting: string; change: string };
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

export interface RunningBridge {
  /** Where the receiver (or the worker's health server) listens; null when nothing does. */
  url: string | null;
  config: LoadedConfig;
  /** Graceful stop: readiness false, HTTP drained, in-flight jobs finished (up to the grace), connections closed. */
  stop(reason?: string): Promise<void>;
  /** Resolves with the exit code once the bridge has stopped. */
  stopped: Promise<number>;
}

/** What every part of a bridge is built with: the config read once, one logger, one registry, one control connection. */
interface BridgeBase {
  options: RunBridgeOptions;
  env: NodeJS.ProcessEnv;
  loaded: LoadedConfig;
  config: BridgeConfig;
  log: Logger;
  /** Where Redis is, for messages. */
  address: string;
  outage: OutageReporter;
  tracing: TracingHandle | undefined;
  registry: Registry;
  /** Config reloads by result, counted by the hot reload (watchRules). */
  reloads: Counter<'result'>;
  layout: KeyLayout;
  redis: RedisClient;
  /** Resolves once this Redis is known to hold the config's key layout (layout-claim.ts). */
  layoutChecked: Promise<void>;
  state: BridgeState;
  /** The businesses served now (kept current by the hot reload). */
  served: { businesses: readonly BusinessSetup[] };
}

/** The HTTP side of a bridge: the receiver (`start`, `serve`), a health server (`work --port`) or nothing. */
interface BridgeHttp {
  url: string | null;
  close?: () => Promise<void>;
  receiver?: Receiver;
}

/**
 * The composition root of `convo-bridge start | serve | work`: reads the config once and builds
 * the receiver and/or the worker with one logger, one metrics registry and one shutdown path.
 * Build, start, then hand back the stop.
 */
export async function runBridge(options: RunBridgeOptions): Promise<RunningBridge> {
  const base = await buildBase(options);
  const composed = options.mode !== 'serve' ? buildWorker(base) : undefined;
  if (composed) startWorker(base, composed);
  const queuesForGauges = composed ? composed.worker.queues.flatMap((q) => [q.events, q.timers]) : [];
  registerGauges(base, composed);
  let replicaCheck: ReplicaCheck | undefined;
  const readiness = createReadiness({
    state: base.state,
    outage: base.outage,
    redis: base.redis,
    address: base.address,
    worker: composed?.worker,
    eventQueues: composed ? composed.worker.queues.map((q) => q.events) : [],
    stallWindowMs: options.stallWindowMs ?? 120_000,
    replicas: () => replicaCheck?.problem() ?? null,
  });
  const http = await startHttp(base, composed, queuesForGauges, readiness);
  // Only a receiver acknowledges webhooks, so only it needs the replicas of redis.replicas_ack.
  replicaCheck =
    options.mode === 'work'
      ? undefined
      : watchReplicas({
          redis: base.redis,
          replicasAck: base.config.redis.replicasAck,
          address: base.address,
          log: base.log,
        });
  const watcher = watchRules(base, composed, http.receiver);
  const shutdown = createShutdown({
    state: base.state,
    log: base.log,
    outage: base.outage,
    redis: base.redis,
    address: base.address,
    watcher,
    closeHttp: http.close,
    receiver: http.receiver,
    worker: composed,
    graceMs: base.config.worker.shutdownGraceMs,
    tracing: base.tracing,
  });
  void shutdown.stopped.then(() => replicaCheck?.stop());
  stopOnLayoutMismatch(base, shutdown);
  if (options.handleSignals) stopOnSignals(shutdown, base.log);
  return { url: http.url, config: base.loaded, stop: shutdown.stop, stopped: shutdown.stopped };
}

/** Reads the config, then sets up what every part shares: logging, tracing, metrics, the control connection. */
async function buildBase(options: RunBridgeOptions): Promise<BridgeBase> {
  const env = options.env ?? process.env;
  const loaded = await loadConfig(options.configPath, { env });
  const { config } = loaded;
  const baseLogger = options.logger ?? createLogger({ level: config.log.level });
  const address = describeTopology(config.redis.topology);
  // Redis down must not flood the log: one report per interval from the control
  // connection below; the same errors from the other connections are dropped meanwhile.
  const outageIntervalMs = options.outageReportIntervalMs ?? 30_000;
  const outage = createOutageReporter({ address, intervalMs: outageIntervalMs });
  const logger = quietConnectionErrors(baseLogger, { isDown: outage.isDown, intervalMs: outageIntervalMs });
  const log = logger.child({ mode: options.mode });
  // Say at start-up which defaults the config relies on (unmapped WhatsApp channels...).
  for (const line of describeConfigDefaults(config)) log.info(`config default: ${line}`);
  // What `validate` warns about (a rule that can never fire...) is said at start-up too.
  for (const warning of loaded.warnings) log.warn(`config warning: ${formatConfigIssue(warning)}`);
  // Off by default; when on, installed before the receiver and the worker are built, so that
  // what they build is traced.
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
  const redis = connectControlRedis(config.redis.topology, { address, outage, log });
  const state: BridgeState = { shuttingDown: false, exitCode: 0 };
  const layoutChecked = claimLayoutInBackground(redis, layout, state);
  const served = { businesses: businessSetups(loaded) };
  return {
    options,
    env,
    loaded,
    config,
    log,
    address,
    outage,
    tracing,
    registry,
    reloads,
    layout,
    redis,
    layoutChecked,
    state,
    served,
  };
}

/** The gauges read from Redis when Prometheus scrapes (queues, dead letters, Redis itself). */
function registerGauges(base: BridgeBase, composed: ComposedWorker | undefined): void {
  const { registry, redis, layout, outage, config, served } = base;
  registerQueueGauges(registry, {
    shards: composed?.worker.queues ?? [],
    redis,
    layout,
    businesses: () => served.businesses,
    ...(composed ? { held: () => composed.worker.held(), heldLabel } : {}),
    isDown: outage.isDown,
  });
  registerRedisGauges(registry, { redis, isDown: outage.isDown, replicasAck: config.redis.replicasAck });
}

/** The worker side (`start`, `work`), composed from the config; its queues' errors go to the log. */
function buildWorker(base: BridgeBase): ComposedWorker {
  const { options, env, config, loaded, log, registry } = base;
  const now = options.now ?? testClock(env, log);
  const composed = composeWorker(config, base.served.businesses, {
    logger: log,
    registry,
    ...(now ? { now } : {}),
  });
  const shadows = describeShadows(loaded);
  if (shadows) log.info(shadows, 'shadow rules on: evaluated beside the active rules, never acted on');
  for (const queue of composed.worker.queues.flatMap((q) => [q.events, q.timers])) {
    // Without a listener BullMQ prints every connection error with its stack on stderr.
    queue.on('error', (error: Error) => log.warn({ err: error.message }, `${queue.name} queue error`));
  }
  return composed;
}

/**
 * With Redis down the workers wait for it (and start taking jobs by themselves once it is
 * back) while the receiver and the health endpoints come up: never block the start on Redis.
 */
function startWorker(base: BridgeBase, composed: ComposedWorker): void {
  const { config, loaded, log, address, layoutChecked, state } = base;
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
        if (!(error instanceof LayoutMismatchError || error instanceof RedisDatabaseError)) {
          log.error({ err: describeError(error) }, 'the worker could not start');
        }
      },
    );
  setTimeout(() => {
    if (!workerStarted && !state.shuttingDown) {
      log.warn(
        { redis: address },
        `the worker is waiting for Redis at ${address}; it starts taking jobs by itself once Redis answers`,
      );
    }
  }, WORKER_START_WAIT_MS).unref();
}

/** The receiver (`start`, `serve`), or /healthz, /readyz and /metrics alone (`work --port`), listening. */
async function startHttp(
  base: BridgeBase,
  composed: ComposedWorker | undefined,
  queuesForGauges: Queue[],
  readiness: () => Promise<string | null>,
): Promise<BridgeHttp> {
  const { options, config, registry } = base;
  if (options.mode !== 'work') return startReceiver(base, composed, queuesForGauges, readiness);
  if (options.port === undefined) return { url: null };
  const details = composed ? businessReadiness(composed.worker) : undefined;
  const server = await startHealthServer(
    options.port,
    config.receiver.host,
    registry,
    readiness,
    details,
  ).catch((error: unknown) =>
    failStart(
      explainListenFailure(error, {
        host: config.receiver.host,
        port: options.port ?? 0,
        setting: 'work --port',
        change: 'pass another --port (0 for any free one)',
      }),
      base,
      composed,
    ),
  );
  const address = server.address() as AddressInfo;
  return {
    url: `http://${config.receiver.host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function startReceiver(
  base: BridgeBase,
  composed: ComposedWorker | undefined,
  queuesForGauges: Queue[],
  readiness: () => Promise<string | null>,
): Promise<BridgeHttp> {
  const { config, layout, layoutChecked, log, registry } = base;
  // Repeated 503s and failed admin logins: one line per interval with a count, like the outage report.
  const repeatLogIntervalMs = base.options.outageReportIntervalMs ?? 30_000;
  let receiverRef: Receiver | undefined;
  const admin = composed
    ? await buildAdmin({
        admin: config.admin,
        queues: queuesForGauges,
        log,
        registry,
        repeatLogIntervalMs,
        api: operatorApiParts(base, composed, (naming) => {
          if (receiverRef === undefined) throw new Error('the receiver is not built yet');
          return receiverRef.ingestFor(naming);
        }),
      })
    : undefined;
  const businesses = base.served.businesses;
  const { path: _path, secrets: _secrets, ...shared } = receiverOptionsFromConfig(config);
  const receiver = createReceiver({
    ...shared,
    businesses: receiverBusinesses(businesses),
    ...(composed ? { readinessDetails: businessReadiness(composed.worker) } : {}),
    layout,
    layoutChecked,
    logger: log,
    repeatLogIntervalMs,
    metrics: registry,
    readiness,
    ...(admin ? { routes: (app: Express) => admin.routes(app) } : {}),
  });
  receiverRef = receiver;
  const listening = await receiver
    .listen(config.receiver.port, config.receiver.host)
    .catch((error: unknown) =>
      failStart(
        explainListenFailure(error, {
          host: config.receiver.host,
          port: config.receiver.port,
          ...(base.options.portSetting ?? {
            setting: `receiver.port in ${base.options.configPath}`,
            change: 'set receiver.port to another port (0 for any free one)',
          }),
        }),
        base,
        composed,
        receiver,
      ),
    );
  const adminServer = await admin
    ?.listen()
    .catch((error: unknown) => failStart(error, base, composed, receiver));
  const [only] = businesses;
  if (businesses.length === 1 && only) {
    log.info({ url: `${listening.url}${only.config.receiver.path}` }, 'receiver listening');
  } else {
    log.info(
      { url: listening.url, businesses: businesses.length },
      'receiver listening for every business on its own path',
    );
  }
  const close = async () => {
    await Promise.all([listening.close(), adminServer?.close()]);
    admin?.flush();
  };
  return { url: listening.url, close, receiver };
}

/** What the operator API reads and acts through: this bridge's Redis, businesses, queues and receiver. */
function operatorApiParts(
  base: BridgeBase,
  composed: ComposedWorker,
  ingestFor: Receiver['ingestFor'],
): Omit<ApiDeps, 'log' | 'linkSecret'> {
  const { redis, layout, served, config } = base;
  const namingOf = (id: string) => served.businesses.find((business) => business.id === id)?.naming;
  const readiness = businessReadiness(composed.worker);
  return {
    redis,
    layout,
    businesses: () => served.businesses,
    businessStates: () => (readiness().businesses ?? {}) as Record<string, string>,
    queues: (shard) => {
      const found = composed.worker.queues.find((q) => q.shard.index === shard);
      if (found === undefined) throw new Error(`no queue shard ${shard}`);
      return found;
    },
    ingestFor,
    stories: createStoryReader({
      redis,
      layoutOf: (id) => {
        const naming = namingOf(id);
        return naming === undefined ? undefined : layout.forNaming(naming);
      },
      retentionMs: config.retention.storiesMs,
    }),
  };
}

/**
 * A start that fails half-way (a port in use) must not leave the parts already running holding
 * the process open: close them, then report the error.
 */
async function failStart(
  error: unknown,
  base: BridgeBase,
  composed: ComposedWorker | undefined,
  receiver?: Receiver,
): Promise<never> {
  await receiver?.close().catch(() => undefined);
  await composed?.close(0).catch(() => undefined);
  base.redis.disconnect();
  throw error;
}

/**
 * Hot reload: a valid new config swaps in its businesses (adds, changes and removes them, their
 * rules with them); an invalid one keeps the old config in force.
 */
function watchRules(
  base: BridgeBase,
  composed: ComposedWorker | undefined,
  receiver: Receiver | undefined,
): ConfigWatcher {
  const { options, env, config, log, reloads } = base;
  return watchConfig(options.configPath, {
    env,
    shadowFiles: base.loaded.shadowFiles,
    onReload: (next) => {
      // Growing from one business to several (or back) is a reload like any other: the naming of
      // each business says which data it keeps (takes_over: default).
      const before = base.served.businesses;
      const after = businessSetups(next);
      receiver?.setBusinesses(receiverBusinesses(after));
      composed?.setBusinesses(after);
      base.served.businesses = after;
      reloads.inc({ result: 'ok' });
      log.info(
        {
          ...describeBusinessChange(before, after),
          rules: next.rules.rules.length,
          ...(describeShadows(next) ?? { shadow: 'off' }),
        },
        `config reloaded: ${after.length} business(es) in force`,
      );
      if (sharedSettingsChanged(config, next.config)) {
        log.warn(
          'receiver, redis, retention, story or admin settings changed too: they take effect after a restart',
        );
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
}

/** The shadow rules a config puts in force, by business, for the log; undefined when none. */
function describeShadows(loaded: LoadedConfig): Record<string, unknown> | undefined {
  const on = loaded.businesses.filter((business) => business.shadow !== undefined);
  if (on.length === 0) return undefined;
  const one = (business: (typeof on)[number]) =>
    `${business.shadow?.file} (${business.shadow?.rules.rules.length} rule(s))`;
  return { shadow: Object.fromEntries(on.map((business) => [business.id, one(business)])) };
}

/** Whether a reload changed what only a restart applies (a business's own path and secrets reload). */
function sharedSettingsChanged(before: BridgeConfig, after: BridgeConfig): boolean {
  const receiverOf = (config: BridgeConfig) => ({
    ...config.receiver,
    path: null,
    secrets: null,
    secretsDefaulted: null,
  });
  return (
    JSON.stringify(receiverOf(after)) !== JSON.stringify(receiverOf(before)) ||
    JSON.stringify(after.redis) !== JSON.stringify(before.redis) ||
    JSON.stringify(after.retention) !== JSON.stringify(before.retention) ||
    JSON.stringify(after.story) !== JSON.stringify(before.story) ||
    JSON.stringify(after.admin) !== JSON.stringify(before.admin)
  );
}

/**
 * A Redis that holds another key layout than the config asks for stops the bridge with exit code
 * 2; one that refuses the configured database with exit code 1: the config names a
 * database this server does not have, and nothing may run in another one.
 */
function stopOnLayoutMismatch(base: BridgeBase, shutdown: Shutdown): void {
  const { layoutChecked, log, state } = base;
  layoutChecked.catch((error: unknown) => {
    if (error instanceof RedisDatabaseError) {
      log.error({ code: error.code }, `${redisSetting(base.config.redis.topology)}: ${error.message}`);
      state.exitCode = 1;
      void shutdown.stop('Redis refused the configured database');
      return;
    }
    if (!(error instanceof LayoutMismatchError)) return;
    log.error({ code: error.code }, error.message);
    state.exitCode = 2;
    void shutdown.stop('the Redis key layout does not match the config');
  });
}

/** The config key that names the database, with the URL (never its password) for redis.url. */
function redisSetting(topology: BridgeConfig['redis']['topology']): string {
  return topology.kind === 'single'
    ? `redis.url ${redactUrl(topology.url)}`
    : `redis.db ${topology.kind === 'sentinel' ? topology.db : 0}`;
}
