import type { Redis } from 'ioredis';
import type { EmulatorOptions } from '../../src/emulator/emulator-options.js';
import { type EmulatorHandle, startEmulator } from '../../src/emulator/start-emulator.js';
import { bridgeKeys } from '../../src/queue/redis-keys.js';
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
  /** More environment for the bridge processes (e.g. the test-only clock offset). */
  env?: Record<string, string>;
}

/**
 * One end-to-end world: the platform emulator (in this process), a CRM sink, and convo-bridge
 * processes started from the build with a config file, all on loopback, with a Redis key prefix
 * of its own.
 */
export async function createWorld(options: WorldOptions) {
  const port = await findFreePort();
  const prefix = uniqueName('e2e');
  const redisUrl = options.redisUrl ?? testRedisUrl();
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
  const file = await writeTempConfig(options.config);
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
  const launch = async (mode: 'start' | 'serve' | 'work') => {
    const bridge = await spawnBridge(mode, file.path, env);
    bridges.push(bridge);
    return bridge;
  };
  for (const mode of options.processes ?? ['start']) await launch(mode);
  const redis: Redis = connectTestRedis(redisUrl);
  // A world may start before its Redis does (test/integration/e2e/redis-down-at-start): it reconnects.
  redis.on('error', () => {});

  const admin = emulator.admin;
  return {
    emulator,
    admin,
    crm,
    redis,
    prefix,
    keys: bridgeKeys(prefix),
    env,
    bridges,
    configPath: file.path,
    launch,
    /** Timers registered in a conversation (pending or firing). */
    timerIds: (conversationId: string) => timerIds(redis, bridgeKeys(prefix), conversationId),
    /** The batch job of an event and, once it completed, the event's result. */
    eventRun: (eventKey: string) => eventRun(redis, bridgeKeys(prefix), prefix, eventKey),
    /** A conversation on a channel type (and channel id, e.g. ch_waba_1 for the example's WhatsApp API number). */
    conversation(id: string, channel: { type: string; id?: string; name?: string }, label = 'Budi') {
      return admin.createConversation({ id, label, channel: channel as never });
    },
    say(conversationId: string, text: string, at?: string | number) {
      return admin.customerMessage(conversationId, at === undefined ? { text } : { text, at });
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
    async close() {
      await Promise.allSettled(bridges.map((b) => b.stop('SIGTERM')));
      await Promise.allSettled([emulator.close(), crm.close()]);
      await deleteKeys(redis, prefix);
      await redis.quit();
      await file.cleanup();
    },
  };
}
export type World = Awaited<ReturnType<typeof createWorld>>;
export type { CrmSink };
