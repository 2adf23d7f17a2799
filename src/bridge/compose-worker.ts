import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { BridgeConfig } from '../config/config-schema.js';
import { createForwarder } from '../forward/forward-event.js';
import { createPlatformClient, type PlatformClient } from '../platform/create-platform-client.js';
import { layoutFor } from '../queue/key-layout.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import { createEventRecorder } from '../record/create-event-recorder.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisClient } from '../redis/redis-connection.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import { unmappedChannelAdvice } from '../rules/default-channel-kind.js';
import { classifyPlatformError, platformPort } from '../worker/adapters/platform-adapter.js';
import { type RulesPortOptions, rulesPort } from '../worker/adapters/rules-adapter.js';
import { createWorkerMetrics, type WorkerMetrics } from '../worker/adapters/worker-metrics.js';
import { type BridgeWorker, createBridgeWorker } from '../worker/create-bridge-worker.js';
import { type CallBudget, createCallBudget } from '../worker/failures/call-budget.js';
import type { RulesPort } from '../worker/ports.js';

export interface ComposedWorker {
  worker: BridgeWorker;
  client: PlatformClient;
  metrics: WorkerMetrics | undefined;
  /** Swaps in newly loaded rules (hot reload); jobs already planned keep their frozen plan. */
  setRules(rules: CompiledRules): void;
  close(graceMs?: number): Promise<void>;
}

/**
 * Builds the worker side from a loaded config: the platform client (with the shared call budget
 * and metrics hooks), the forwarder, the rules (swappable for hot reload) and the BullMQ workers,
 * which get the config's `worker:` section whole.
 */
export function composeWorker(
  config: BridgeConfig,
  rules: CompiledRules,
  options: { logger: Logger; registry?: Registry; now?: () => Date },
): ComposedWorker {
  const layout = layoutFor(config.redis);
  const budgetRedis = config.platform.rateLimit
    ? createRedisClient(config.redis.topology, {
        maxRetriesPerRequest: null,
        connectionName: 'convo-bridge:budget',
      })
    : undefined;
  budgetRedis?.on('error', () => {});
  const budget =
    budgetRedis && config.platform.rateLimit
      ? createCallBudget({
          redis: budgetRedis,
          key: layout.global.platformRate,
          max: config.platform.rateLimit.max,
          perMs: config.platform.rateLimit.perMs,
        })
      : undefined;
  const metrics = options.registry ? createWorkerMetrics(options.registry) : undefined;
  const client = platformClientFor(config.platform, budget, metrics);

  const portOptions = assumedChannelAdvice(options.logger);
  let current: RulesPort = rulesPort(rules, portOptions);
  const worker = createBridgeWorker({
    topology: config.redis.topology,
    prefix: config.redis.prefix,
    layout,
    platform: platformPort(client),
    classifyPlatformError,
    forwarder: createForwarder(
      Object.fromEntries(
        Object.entries(config.destinations).map(([name, d]) => [
          name,
          { url: d.url, secret: d.secret, timeoutMs: d.timeoutMs, retries: d.retries },
        ]),
      ),
    ),
    rules: () => current,
    settings: config.worker,
    logger: options.logger,
    ...(metrics ? { metrics } : {}),
    ...(options.now ? { now: options.now } : {}),
    // Read at start: changing record: takes a restart (hot reload swaps the rules only).
    ...(config.record.enabled
      ? {
          makeRecorder: (redis: RedisClient, keys: BridgeKeys) =>
            createEventRecorder(redis, keys, config.record, options.logger),
        }
      : {}),
  });

  let closing: Promise<void> | undefined;
  return {
    worker,
    client,
    metrics,
    setRules(next) {
      current = rulesPort(next, portOptions);
    },
    close(graceMs = config.worker.shutdownGraceMs) {
      closing ??= (async () => {
        await worker.close(graceMs);
        await budgetRedis?.quit().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** The platform client, behind the shared call budget when there is one, feeding the metrics. */
function platformClientFor(
  platform: BridgeConfig['platform'],
  budget: CallBudget | undefined,
  metrics: WorkerMetrics | undefined,
): PlatformClient {
  return createPlatformClient({
    baseUrl: platform.baseUrl,
    form: platform.form,
    auth:
      platform.auth.businessId === null
        ? { scheme: platform.auth.scheme, secret: platform.auth.secret }
        : {
            scheme: platform.auth.scheme,
            businessId: platform.auth.businessId,
            secret: platform.auth.secret,
          },
    timeoutMs: platform.timeoutMs,
    retry: platform.retry,
    allowInsecureHttp: true,
    hooks: {
      ...(budget ? { beforeRequest: () => budget.take() } : {}),
      afterResponse: (info) => {
        metrics?.platformCalls.inc({ operation: info.operation, result: info.outcome });
        // 1 while the platform refuses our credentials; any accepted call clears it.
        if (info.outcome === 'AUTH' || info.outcome === 'PERMISSION') metrics?.authFailing.set(1);
        else if (info.outcome === 'ok') metrics?.authFailing.set(0);
        metrics?.platformLatency.observe({ operation: info.operation }, info.durationMs / 1000);
      },
    },
  });
}

/**
 * Issue 12: the first event of a WhatsApp channel whose kind is only assumed logs, once per
 * channel (for the life of the process, across reloads), the YAML line that states it.
 */
function assumedChannelAdvice(logger: Logger): RulesPortOptions {
  const advised = new Set<string>();
  return {
    onAssumedChannel: (channel, assumed) => {
      const key = `${channel.rawEngine ?? channel.engine}|${channel.id ?? ''}`;
      if (advised.has(key) || advised.size >= 10_000) return;
      advised.add(key);
      logger.warn(
        { channelId: channel.id, engine: channel.rawEngine ?? channel.engine, assumedKind: assumed.kind },
        unmappedChannelAdvice(channel, assumed),
      );
    },
  };
}
