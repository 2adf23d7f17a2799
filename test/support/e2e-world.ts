import { Cluster } from 'ioredis';
import { inject, it } from 'vitest';
import type { EmulatorAdmin } from '../../src/emulator/emulator-admin.js';
import type { EmulatorOptions } from '../../src/emulator/emulator-options.js';
import { type EmulatorHandle, startEmulator } from '../../src/emulator/start-emulator.js';
import { createKeyLayout, type KeyLayout } from '../../src/queue/key-layout.js';
import type { BridgeKeys } from '../../src/queue/redis-keys.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import {
  type BridgeProcess,
  type CrmSink,
  findFreePort,
  spawnBridge,
  startCrmSink,
  writeTempConfig,
} from './bridge-harness.js';
import { eventRun, timerIds } from './event-runs.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from './redis.js';

export const E2E = {
  businessId: 'biz-e2e',
  secret: 'sk-e2e-secret',
  webhookSecret: 'wh-e2e-secret',
  crmSecret: 'crm-e2e-secret',
  path: '/webhooks/platform',
};

export interface WorldOptions {
  /** The config file's text (see exampleConfig). */
  config: string;
  form?: 'current' | 'earlier';
  /** Processes to start: one `start` by default; e.g. ['serve', 'work', 'work']. */
  processes?: ('start' | 'serve' | 'work')[];
  emulator?: Partial<EmulatorOptions>;
  redisUrl?: string;
  /** What the emulator's webhooks carry: E2E.webhookSecret by default; null: its default, the Secret Key. */
  webhookSecret?: string | null;
  /** The receiver's port to try first (a free one by default); taken by then, the world moves on to another. */
  port?: number;
  /** More environment for the bridge processes (e.g. the test-only clock offset). */
  env?: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Set by the `cluster` project (test/support/cluster-setup.ts): the end-to-end worlds run
     * against a Redis Cluster with this many queue shards instead of the shared single Redis.
     */
    e2eCluster?: { nodes: string[]; shards: number };
  }
}

/** The cluster the current project runs on, if any. */
export function e2eCluster(): { nodes: string[]; shards: number } | undefined {
  return inject('e2eCluster');
}

/**
 * `it` for a case whose outcome a Redis Cluster cannot change: what a rule renders from one event,
 * what the platform's side holds (its history, its earlier interface form), what the logs say. The
 * cluster project re-runs the end-to-end files for what sharding can break (keys routed to a
 * conversation's shard, scripts, timers, dead letters, order, exactly once, forget on every node)
 * and skips these; the integration project runs them.
 */
export function itOffCluster(): ReturnType<typeof it.skipIf> {
  return it.skipIf(e2eCluster() !== undefined);
}

/**
 * A config for the cluster project: its `redis.url` line replaced by the cluster's nodes and
 * the shard count; the rest of the test's config as written.
 */
function onCluster(config: string, cluster: { nodes: string[]; shards: number }): string {
  const block = `redis:\n  cluster:\n    nodes: [ ${cluster.nodes.map((n) => `"${n}"`).join(', ')} ]\n  shards: ${cluster.shards}\n`;
  const replaced = config.replace(/redis:\n {2}url: [^\n]*\n/, block);
  if (replaced === config)
    throw new Error('the cluster project needs a config with a `redis:\\n  url:` line');
  return replaced;
}

/**
 * The bridge's keys as a test sees them: per-conversation keys routed to the conversation's shard;
 * per-event keys (`run`, `dedupe`) to the shard of the conversation the world created the event
 * in (`say`); the rest are the keys of no conversation.
 */
function worldKeys(layout: KeyLayout, conversationOf: (eventKey: string) => string | undefined): BridgeKeys {
  const of = (conversationId: string) => layout.shardOf(conversationId).keys;
  const ofEvent = (eventKey: string) => of(conversationOf(eventKey) ?? '');
  return {
    ...layout.global,
    conversation: (id: string) => of(id).conversation(id),
    order: (id: string) => of(id).order(id),
    run: (eventKey: string) => ofEvent(eventKey).run(eventKey),
    dedupe: (eventKey: string) => ofEvent(eventKey).dedupe(eventKey),
  };
}

/**
 * How a test plays one business of the world's emulator: its conversations, its customers, what
 * the bridge sent it. `conversationOfEvent` learns which conversation each event the world made
 * belongs to (keys name only the message; message ids are UUIDs, unique across businesses).
 */
function businessDriver(admin: EmulatorAdmin, conversationOfEvent: Map<string, string>) {
  return {
    /** The business's emulator admin (`admin.businessId` is its Business ID). */
    admin,
    /** A conversation on a channel type (and channel id, e.g. ch_waba_1 for the example's WhatsApp API number). */
    conversation(id: string, channel: { type: string; id?: string; name?: string }, label = 'Budi') {
      return admin.createConversation({ id, label, channel: channel as never });
    },
    say(conversationId: string, text: string, at?: string | number) {
      const message = admin.customerMessage(conversationId, at === undefined ? { text } : { text, at });
      conversationOfEvent.set(`channel.message_in|${message.messageId}`, conversationId);
      return message;
    },
    detail(conversationId: string) {
      return admin.conversation(conversationId);
    },
    notes(conversationId: string) {
      return admin.conversation(conversationId).notes.map((n) => n.text);
    },
    /** Messages the business side sent through the API (replies of the bridge). */
    apiMessages(conversationId: string) {
      return admin.conversation(conversationId).messages.filter((m) => m.origin === 'api');
    },
    /** Platform API requests seen by the emulator for an endpoint (and a conversation). */
    requests(endpoint: string, conversationId?: string) {
      return admin
        .requests()
        .filter(
          (r) =>
            r.endpoint === endpoint &&
            (conversationId === undefined ||
              r.path.includes(conversationId) ||
              JSON.stringify(r).includes(conversationId)),
        );
    },
  };
}
export type BusinessDriver = ReturnType<typeof businessDriver>;

/**
 * One end-to-end world: the platform emulator (in this process), a CRM sink, and convo-bridge
 * processes started from the build with a config file, all on loopback, with a Redis key prefix
 * of its own.
 */
export async function createWorld(options: WorldOptions) {
  const port = options.port ?? (await findFreePort());
  const prefix = uniqueName('e2e');
  const cluster = e2eCluster();
  // On the cluster project, tools given REDIS_URL (dlq --redis-url ...) reach one of its nodes.
  const redisUrl = options.redisUrl ?? (cluster ? `redis://${cluster.nodes[0]}` : testRedisUrl());
  const crm = await startCrmSink(E2E.crmSecret);
  const emulator: EmulatorHandle = await startEmulator({
    businessId: E2E.businessId,
    secret: E2E.secret,
    form: options.form ?? 'current',
    webhook: {
      url: `http://127.0.0.1:${port}${E2E.path}`,
      ...(options.webhookSecret === null ? {} : { secret: options.webhookSecret ?? E2E.webhookSecret }),
    },
    webhookRetryDelaysMs: [200, 500, 1000],
    seed: 7,
    ...options.emulator,
  });
  const file = await writeTempConfig(cluster ? onCluster(options.config, cluster) : options.config);
  const env: Record<string, string> = {
    PLATFORM_BASE_URL: emulator.url,
    BUSINESS_ID: E2E.businessId,
    SECRET_KEY: E2E.secret,
    WEBHOOK_SECRET: E2E.webhookSecret,
    PORT: String(port),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    CRM_WEBHOOK_URL: crm.url,
    CRM_SECRET: E2E.crmSecret,
    ...options.env,
  };
  const bridges: BridgeProcess[] = [];
  const webhookSecret =
    options.webhookSecret === null ? undefined : (options.webhookSecret ?? E2E.webhookSecret);
  const launch = async (mode: 'start' | 'serve' | 'work') => {
    // The port was free when picked; another process may bind it before the bridge does. Then the
    // bridge starts on a new one and the emulator's webhooks follow it.
    for (let attempt = 0; ; attempt++) {
      try {
        const bridge = await spawnBridge(mode, file.path, env);
        bridges.push(bridge);
        return bridge;
      } catch (error) {
        if (mode === 'work' || attempt >= 2 || !/already in use/.test(String(error))) throw error;
        env.PORT = String(await findFreePort());
        emulator.admin.setWebhook({
          url: `http://127.0.0.1:${env.PORT}${E2E.path}`,
          ...(webhookSecret === undefined ? {} : { secret: webhookSecret }),
        });
      }
    }
  };
  try {
    for (const mode of options.processes ?? ['start']) await launch(mode);
  } catch (error) {
    // Nothing of a world that did not start is left running.
    await Promise.allSettled(bridges.map((b) => b.stop('SIGKILL')));
    await Promise.allSettled([emulator.close(), crm.close()]);
    await file.cleanup();
    throw error;
  }
  const redis: RedisClient = cluster
    ? new Cluster(
        cluster.nodes.map((n) => ({ host: n.split(':')[0] as string, port: Number(n.split(':')[1]) })),
        { redisOptions: { maxRetriesPerRequest: null } },
      )
    : connectTestRedis(redisUrl);
  // A world may start before its Redis does (test/integration/e2e/redis-down-at-start): it reconnects.
  redis.on('error', () => {});
  const layout = createKeyLayout({
    prefix,
    shards: cluster?.shards ?? 1,
    tagged: cluster !== undefined,
  });
  // Which conversation each event the world made belongs to (its key names only the message).
  const conversationOfEvent = new Map<string, string>();
  const keys = worldKeys(layout, (eventKey) => conversationOfEvent.get(eventKey));
  const shardOfEvent = (eventKey: string) => layout.shardOf(conversationOfEvent.get(eventKey) ?? '');

  const admin = emulator.admin;
  const first = businessDriver(admin, conversationOfEvent);
  return {
    emulator,
    crm,
    redis,
    prefix,
    layout,
    keys,
    env,
    bridges,
    configPath: file.path,
    launch,
    /** Timers registered in a conversation (pending or firing). */
    timerIds: (conversationId: string) => timerIds(redis, keys, conversationId),
    /** The batch job of an event and, once it completed, the event's result. */
    eventRun: (eventKey: string) =>
      eventRun(redis, shardOfEvent(eventKey).keys, shardOfEvent(eventKey).queuePrefix, eventKey),
    /**
     * "Exactly once" holds after a quiet period, not at the first sighting: waits until every
     * shard's events queue is drained (nothing waiting, active, delayed or prioritized), no timer
     * is waiting, running or due, no business of the emulator has a webhook delivery pending, and
     * neither the platform (any business) nor the CRM has seen a new request for `quietMs`. A job
     * a dead worker held stays in `active` until it is run again, so it keeps the world unsettled
     * whatever `quietMs` is. Throws after `timeoutMs`.
     */
    async settled(options: { quietMs?: number; timeoutMs?: number } = {}): Promise<void> {
      const quietMs = options.quietMs ?? 3_000;
      const deadline = Date.now() + (options.timeoutMs ?? 60_000);
      const outside = () =>
        [
          ...admin.businessIds().map((id) => {
            const summary = admin.business(id).summary();
            return `${id}:${summary.requestsSeen}:${summary.deliveriesPending}`;
          }),
          `crm:${crm.requests.length}`,
        ].join('/');
      const deliveriesPending = () =>
        admin.businessIds().reduce((sum, id) => sum + admin.business(id).summary().deliveriesPending, 0);
      const queued = async () => {
        let total = 0;
        for (const shard of layout.all) {
          const key = (queue: string, suffix: string) => `${shard.queuePrefix}:${queue}:${suffix}`;
          total +=
            (await redis.llen(key('events', 'wait'))) +
            (await redis.llen(key('events', 'active'))) +
            (await redis.zcard(key('events', 'delayed'))) +
            (await redis.zcard(key('events', 'prioritized'))) +
            (await redis.llen(key('timers', 'wait'))) +
            (await redis.llen(key('timers', 'active'))) +
            (await redis.zcard(key('timers', 'prioritized'))) +
            // A timer due now (BullMQ's delayed score is the due time in ms, shifted by 12 bits).
            (await redis.zcount(key('timers', 'delayed'), 0, Date.now() * 0x1000));
        }
        return total + deliveriesPending();
      };
      let seen = outside();
      let quietSince = Date.now();
      for (;;) {
        const waiting = await queued();
        const now = outside();
        if (waiting > 0 || now !== seen) {
          seen = now;
          quietSince = Date.now();
        } else if (Date.now() - quietSince >= quietMs) {
          return;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `not settled within ${options.timeoutMs ?? 60_000} ms: ${waiting} job(s), due timer(s) or webhook deliveries still pending, last outside activity ${Date.now() - quietSince} ms ago`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    /** A BullMQ key of a conversation's shard, e.g. `queueKey(c, 'timers', timerId)`. */
    queueKey: (conversationId: string, queue: 'events' | 'timers', suffix: string) =>
      `${layout.shardOf(conversationId).queuePrefix}:${queue}:${suffix}`,
    // The first business (the emulator's `businessId`): admin, conversation, say, detail, notes, ...
    ...first,
    /**
     * Another business of the emulator (pass `emulator: { businesses: [...] }` to host several):
     * the same helpers, on that business's conversations and requests.
     */
    business(id: string): BusinessDriver {
      return businessDriver(admin.business(id), conversationOfEvent);
    },
    async close() {
      await Promise.allSettled(bridges.map((b) => b.stop('SIGTERM')));
      await Promise.allSettled([emulator.close(), crm.close()]);
      await deleteKeys(redis, prefix);
      if (cluster) await deleteKeys(redis, `{${prefix}`);
      await redis.quit();
      await file.cleanup();
    },
  };
}
export type World = Awaited<ReturnType<typeof createWorld>>;
export type { CrmSink };
