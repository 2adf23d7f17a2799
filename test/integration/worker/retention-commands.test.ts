import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { createReceiver } from '../../../src/receive/create-receiver.js';
import { receiverOptionsFromConfig } from '../../../src/receive/receiver-options.js';
import type { RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { rulesPort } from '../../../src/worker/adapters/rules-adapter.js';
import { createBridgeWorker } from '../../../src/worker/create-bridge-worker.js';
import type { PlatformPort } from '../../../src/worker/ports.js';
import { startRedisServer } from '../../support/redis.js';
import { postWebhook } from '../receive/webhook-client.js';

/**
 * Issue 27, point 5: retention adds no Redis command per event beyond an expiry on keys already
 * written. The same events (a customer message with a note rule, one batch job each, 8
 * conversations) through a real receiver and worker on a private redis-server, counted with
 * INFO commandstats (every call, a script's inner calls included): with the default retention
 * (done jobs removed as they complete) and with done jobs kept an hour, as before issue 27.
 */

const N = 40;
const SECRET = 'wh-commands';

let server: RedisServerHandle;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await server.stop();
});

/** `INFO commandstats` as command -> calls. */
async function commandCalls(): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(match[1] as string, Number(match[2]));
  }
  return calls;
}

function message(conversationId: string, messageId: string) {
  return JSON.stringify({
    event: 'channel.message_in',
    timestamp: Math.floor(Date.now() / 1000),
    conversation_id: conversationId,
    message: {
      id: messageId,
      sender_name: 'Budi',
      channel: { id: 'ch_wa_1', name: 'WhatsApp', engine: 'wa' },
      content: { type: 'text', text: 'halo kak' },
    },
  });
}

/** Bytes of every key under a prefix (MEMORY USAGE, each key's value and overhead). */
async function keyBytes(prefix: string): Promise<number> {
  let bytes = 0;
  for (const key of await redis.keys(`${prefix}:*`)) bytes += (await redis.memory('USAGE', key)) ?? 0;
  return bytes;
}

/**
 * Commands per event (by name, and in all), for N events under a config's `retention:`, and the
 * bytes of Redis keys per event once they are processed.
 */
async function commandsPerEvent(
  retention: string,
): Promise<{ total: number; byCommand: Record<string, number>; bytes: number }> {
  const prefix = `cmd-${randomBytes(4).toString('hex')}`;
  const { config, rules } = parseConfigText(
    `platform: { base_url: "https://platform.invalid", auth: { business_id: b, secret: s } }
receiver: { secrets: [ ${SECRET} ] }
redis: { url: "${server.url}", prefix: ${prefix} }
${retention}
rules:
  - { name: greet, on: message_in, then: [ { note: "seen" } ] }
`,
    { fileName: 'commands.yaml', env: {} },
  );
  let notes = 0;
  const platform: PlatformPort = {
    addNote: async () => {
      notes += 1;
      return {};
    },
    sendMessage: async () => ({}),
    markNeedHuman: async () => undefined,
    async *history() {},
  };
  const worker = createBridgeWorker({
    topology: config.redis.topology,
    prefix,
    platform,
    classifyPlatformError: () => undefined,
    forwarder: { forward: async () => ({ status: 200 }) },
    rules: () => rulesPort(rules),
    settings: config.worker,
    retention: config.retention,
  });
  const receiver = createReceiver(receiverOptionsFromConfig(config));
  try {
    await worker.start();
    const url = `${(await receiver.listen()).url}${config.receiver.path}`;
    const send = async (i: number) => {
      const answer = await postWebhook(url, message(`conv-${i % 8}`, `m-${prefix}-${i}`), {
        'content-type': 'application/json',
        authorization: SECRET,
      });
      expect(answer.status).toBe(200);
    };
    // Warm-up: every conversation seen once, every script loaded.
    for (let i = 0; i < 8; i++) await send(i);
    await waitFor(() => notes === 8, { timeoutMs: 10_000, what: 'the warm-up notes' });
    const before = await commandCalls();
    for (let i = 8; i < 8 + N; i++) await send(i);
    await waitFor(() => notes === 8 + N, { timeoutMs: 20_000, what: `${N} notes` });
    await waitFor(async () => (await worker.eventsQueue.getActiveCount()) === 0, {
      timeoutMs: 5_000,
      what: 'the last job to finish',
    });
    const after = await commandCalls();
    // Counted after the INFO above: the reads below are not in the figures.
    const bytes = Math.round((await keyBytes(prefix)) / (8 + N));
    const byCommand: Record<string, number> = {};
    let total = 0;
    for (const [name, calls] of after) {
      const delta = calls - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0);
      if (delta <= 0) continue;
      byCommand[name] = Math.round((delta / N) * 100) / 100;
      total += delta;
    }
    return { total: total / N, byCommand, bytes };
  } finally {
    await receiver.close();
    await worker.close(0);
  }
}

describe('retention adds no Redis command per event (INFO commandstats, private redis-server)', () => {
  it('removing done jobs costs no more commands per event than keeping them an hour', async () => {
    const kept = await commandsPerEvent('retention: { done_events: 1h }');
    const removed = await commandsPerEvent('');
    // Printed for docs/configuration.md#retention; background commands (stalled checks, blocking
    // reads) are the same in both runs and at most a few per event.
    console.log(JSON.stringify({ kept, removed }, null, 1));
    expect(removed.total).toBeLessThanOrEqual(kept.total);
    // Keeping a done job writes its result and trims the completed set; removing it does neither.
    expect(removed.byCommand.zadd ?? 0).toBeLessThan(kept.byCommand.zadd ?? 0);
    // And what stays in Redis per processed event is smaller (dedupe marker, conversation state).
    expect(removed.bytes).toBeLessThan(kept.bytes);
  });
});
