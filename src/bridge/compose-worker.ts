import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ShadowRules } from '../config/businesses.js';
import type { BridgeConfig } from '../config/config-schema.js';
import type { BusinessNaming } from '../events/business-naming.js';
import { createForwarder } from '../forward/forward-event.js';
import { createPlatformClient, type PlatformClient } from '../platform/create-platform-client.js';
import { type KeyLayout, layoutFor } from '../queue/key-layout.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import { createEventRecorder, type RecorderSettings } from '../record/create-event-recorder.js';
import { closeConnection } from '../redis/close-connection.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createRedisClient } from '../redis/redis-connection.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import { unmappedChannelAdvice } from '../rules/default-channel-kind.js';
import { classifyPlatformError, platformPort } from '../worker/adapters/platform-adapter.js';
import { type RulesPortOptions, rulesPort } from '../worker/adapters/rules-adapter.js';
import { createWorkerMetrics, type WorkerMetrics } from '../worker/adapters/worker-metrics.js';
import type { WorkerBusiness } from '../worker/businesses/worker-business.js';
import { type BridgeWorker, createBridgeWorker } from '../worker/create-bridge-worker.js';
import { type CallBudget, createCallBudget } from '../worker/failures/call-budget.js';
import type { RulesPort } from '../worker/ports.js';
import type { ShadowCandidate } from '../worker/shadow/shadow-observer.js';

export interface ComposedWorker {
  worker: BridgeWorker;
  /**
   * Serve these businesses from now on (hot reload). A business whose platform, destinations or
   * recording changed gets a new client; one whose rules alone changed keeps its client and swaps
   * its rules (jobs already planned keep their frozen plan); a removed one is retired (its queued
   * events finish, see BusinessTable).
   */
  setBusinesses(businesses: readonly BusinessSetup[]): void;
  /** Bounded whatever Redis does (see BridgeWorker.close). */
  close(graceMs?: number, redisGone?: AbortSignal): Promise<void>;
}

/** One business as the worker is built from it: its merged config, its naming and its compiled rules. */
export interface BusinessSetup {
  readonly id: string;
  readonly naming: BusinessNaming;
  readonly config: BridgeConfig;
  readonly rules: CompiledRules;
  /** Its candidate rules (`shadow:`), if any. */
  readonly shadow?: ShadowRules;
}

/** The shadow rules a loaded config puts in force, as the worker takes them. */
export function shadowCandidate(
  config: BridgeConfig,
  shadow: ShadowRules | undefined,
): ShadowCandidate | undefined {
  if (shadow === undefined || config.shadow === null) return undefined;
  return {
    rules: rulesPort(shadow.rules),
    examples: config.shadow.examples,
    maxAgeMs: config.shadow.maxAgeMs,
  };
}

/**
 * The worker side of a bridge, for every config (a config without `businesses:` is a table of
 * one): one BullMQ worker per shard and queue for all the businesses, and per business its own
 * platform client (credentials, base URL, call budget), forwarder, rules and recorder. The shared
 * sections (redis, worker, retention) are the top level's, the same in every business's config.
 */
export function composeWorker(
  shared: BridgeConfig,
  businesses: readonly BusinessSetup[],
  options: { logger: Logger; registry?: Registry; now?: () => Date },
): ComposedWorker {
  const layout = layoutFor(shared.redis);
  const metrics = options.registry ? createWorkerMetrics(options.registry) : undefined;
  // One connection for every business's call budget (each its own key), made when one needs it.
  let budgetRedis: RedisClient | undefined;
  const budgetConnection = (): RedisClient => {
    if (budgetRedis === undefined) {
      budgetRedis = createRedisClient(shared.redis.topology, {
        maxRetriesPerRequest: null,
        connectionName: 'convo-bridge:budget',
      });
      budgetRedis.on('error', () => {});
    }
    return budgetRedis;
  };
  const portOptions = assumedChannelAdvice(options.logger);
  const composed = new Map<string, ComposedBusiness>();
  const compose = (setup: BusinessSetup): ComposedBusiness => {
    const before = composed.get(setup.id);
    const fingerprint = platformFingerprint(setup);
    if (before && before.fingerprint === fingerprint) {
      before.setRules(rulesPort(setup.rules, portOptions), shadowCandidate(setup.config, setup.shadow));
      return before;
    }
    const made = composeBusiness(setup, {
      fingerprint,
      layout,
      metrics: metrics?.forBusiness(setup.id),
      budgetConnection,
      rules: rulesPort(setup.rules, portOptions),
      shadow: shadowCandidate(setup.config, setup.shadow),
      logger: options.logger,
    });
    composed.set(setup.id, made);
    return made;
  };
  const worker = createBridgeWorker({
    topology: shared.redis.topology,
    prefix: shared.redis.prefix,
    layout,
    businesses: businesses.map((setup) => compose(setup).business),
    settings: shared.worker,
    retention: shared.retention,
    story: shared.story,
    logger: options.logger,
    ...(metrics ? { metrics } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    worker,
    setBusinesses(next) {
      worker.setBusinesses(next.map((setup) => compose(setup).business));
    },
    close(graceMs = shared.worker.shutdownGraceMs, redisGone?: AbortSignal) {
      closing ??= (async () => {
        await worker.close(graceMs, redisGone);
        if (budgetRedis) await closeConnection(budgetRedis);
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
    auth: {
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
 * The first event of a WhatsApp channel whose kind is only assumed logs, once per
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

/** One business's side of the worker, and what it was made from (to tell a rules-only change). */
interface ComposedBusiness {
  readonly business: WorkerBusiness;
  readonly fingerprint: string;
  setRules(rules: RulesPort, shadow: ShadowCandidate | undefined): void;
}

/** What a business's client, forwarder and recorder are made from: a change here makes new ones. */
function platformFingerprint(setup: BusinessSetup): string {
  const { config, naming } = setup;
  return JSON.stringify([naming, config.platform, config.destinations, recorderSettings(config)]);
}

function composeBusiness(
  setup: BusinessSetup,
  deps: {
    fingerprint: string;
    layout: KeyLayout;
    metrics: WorkerMetrics | undefined;
    budgetConnection: () => RedisClient;
    rules: RulesPort;
    shadow: ShadowCandidate | undefined;
    logger: Logger;
  },
): ComposedBusiness {
  const { config } = setup;
  const rateLimit = config.platform.rateLimit;
  const budget = rateLimit
    ? createCallBudget({
        redis: deps.budgetConnection(),
        key: deps.layout.forNaming(setup.naming).global.platformRate,
        max: rateLimit.max,
        perMs: rateLimit.perMs,
      })
    : undefined;
  const client = platformClientFor(config.platform, budget, deps.metrics);
  let current = deps.rules;
  let shadow = deps.shadow;
  const log = deps.logger.child({ business: setup.id });
  const business: WorkerBusiness = {
    id: setup.id,
    naming: setup.naming,
    platform: platformPort(client),
    classifyPlatformError,
    forwarder: forwarderFor(config.destinations),
    rules: () => current,
    shadow: () => shadow,
    ...(config.record.enabled
      ? {
          makeRecorder: (redis: RedisClient, keys: BridgeKeys) =>
            createEventRecorder(redis, keys, recorderSettings(config), log),
        }
      : {}),
  };
  return {
    business,
    fingerprint: deps.fingerprint,
    setRules(next, nextShadow) {
      current = next;
      shadow = nextShadow;
    },
  };
}

/** The recorder's settings: the `record:` section and `retention.recorded_events`. */
function recorderSettings(config: BridgeConfig): RecorderSettings {
  return { ...config.record, maxAgeMs: config.retention.recordedEventsMs };
}

/** The signed forwards to a config's destinations. */
function forwarderFor(destinations: BridgeConfig['destinations']) {
  return createForwarder(
    Object.fromEntries(
      Object.entries(destinations).map(([name, d]) => [
        name,
        { url: d.url, secret: d.secret, timeoutMs: d.timeoutMs, retries: d.retries, fields: d.fields },
      ]),
    ),
  );
}
