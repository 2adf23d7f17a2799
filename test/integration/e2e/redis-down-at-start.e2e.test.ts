import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { webhookFixture } from '../../fixtures/webhooks/index.js';
import {
  type BridgeProcess,
  exampleConfig,
  findFreePort,
  spawnBridge,
} from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';
import { startRedisServer } from '../../support/redis.js';

/**
 * Issue 13, item 3: `start`, `serve` and `work` with Redis down stay up (/healthz 200, /readyz 503
 * with the reason, webhooks 503), log one warning per interval instead of a flood, and act on
 * webhooks normally once Redis is started. This test runs its own redis-server, started late.
 */
describe('a bridge started while Redis is down', () => {
  let world: World | undefined;
  let redis: RedisServerHandle | undefined;
  let extra: BridgeProcess | undefined;
  afterEach(async () => {
    await extra?.stop('SIGTERM');
    await world?.close();
    await redis?.stop();
    world = undefined;
    redis = undefined;
    extra = undefined;
  });

  it('start: /healthz 200 and /readyz 503 within 10 s, under 10 log lines in 20 s, then works once Redis runs', async () => {
    const redisPort = await findFreePort();
    const startedAt = Date.now();
    world = await createWorld({
      config: await exampleConfig({ hours: 'open' }),
      redisUrl: `redis://127.0.0.1:${redisPort}`,
    });
    const w = world;
    const base = `http://127.0.0.1:${w.env.PORT}`;
    const bridge = w.bridges[0] as BridgeProcess;

    const ready = await waitFor(
      async () => {
        const health = await fetch(`${base}/healthz`).catch(() => undefined);
        const readiness = await fetch(`${base}/readyz`).catch(() => undefined);
        return health?.status === 200 && readiness?.status === 503 ? readiness : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: '/healthz 200 and /readyz 503' },
    );
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(((await ready.json()) as { error: string }).error).toMatch(/Redis/);

    // A webhook is answered 503 (the platform retries it), not acknowledged and lost.
    w.conversation('c-late-redis', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    const refused = await fetch(`${base}/webhooks/platform`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'wh-e2e-secret' },
      body: webhookFixture('channel-message-in').raw,
    });
    expect(refused.status).toBe(503);

    // Quiet: wait until 20 s after the start, then count every line it wrote.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 20_000 - (Date.now() - startedAt))));
    const lines = bridge.logs.filter((line) => line.trim() !== '');
    expect(lines.length, lines.join('\n')).toBeLessThan(10);
    expect(lines.join('\n')).not.toMatch(/\n\s+at /); // no stack traces
    expect(lines.join('\n')).not.toContain('maxmemory-policy');
    expect(lines.some((line) => line.includes(`Redis at 127.0.0.1:${redisPort} is unreachable`))).toBe(true);

    // Redis comes up: the same process becomes ready and acts on a customer's message.
    redis = await startRedisServer({ port: redisPort });
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: '/readyz 200 once Redis runs',
    });
    w.say('c-late-redis', 'Saya mau komplain');
    await waitFor(() => w.notes('c-late-redis').length === 1, {
      timeoutMs: 15_000,
      what: 'the escalation note after Redis came up',
    });
    expect(w.notes('c-late-redis')).toEqual(["Escalated by escalate-complaints: customer wrote 'komplain'"]);
    expect(bridge.logs.some((line) => line.includes('is reachable again'))).toBe(true);
  });

  it('start: Redis going away while running gives one report, not a flood, and work resumes when it returns', async () => {
    redis = await startRedisServer();
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }), redisUrl: redis.url });
    const w = world;
    const base = `http://127.0.0.1:${w.env.PORT}`;
    const bridge = w.bridges[0] as BridgeProcess;
    w.conversation('c-before', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-before', 'Saya mau komplain');
    await waitFor(() => w.notes('c-before').length === 1, { timeoutMs: 15_000, what: 'the first note' });

    const linesBefore = bridge.logs.length;
    await redis.kill();
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 503, {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: '/readyz 503 after Redis died',
    });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const during = bridge.logs.slice(linesBefore).filter((line) => line.trim() !== '');
    expect(during.length, during.join('\n')).toBeLessThan(10);
    expect(during.join('\n')).not.toMatch(/\n\s+at /);

    await redis.restart();
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: '/readyz 200 once Redis is back',
    });
    w.conversation('c-after', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-after', 'Saya mau komplain');
    await waitFor(() => w.notes('c-after').length === 1, {
      timeoutMs: 15_000,
      what: 'the note after Redis returned',
    });
  });

  it('start: SIGTERM while Redis is still down exits 0 within a few seconds', async () => {
    const redisPort = await findFreePort();
    world = await createWorld({
      config: await exampleConfig({ hours: 'open' }),
      redisUrl: `redis://127.0.0.1:${redisPort}`,
    });
    const bridge = world.bridges[0] as BridgeProcess;
    const stopAt = Date.now();
    expect(await bridge.stop('SIGTERM')).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(10_000);
    expect(bridge.logs.join('\n')).toContain('Redis is unreachable: not waiting for in-flight jobs');
    // Only so that the world's own cleanup (which deletes its keys) has a Redis to talk to.
    redis = await startRedisServer({ port: redisPort });
  });

  it.each(['serve', 'work'] as const)(
    '%s behaves the same: up, /healthz 200, /readyz 503 naming Redis, few lines',
    async (mode) => {
      const redisPort = await findFreePort();
      world = await createWorld({
        config: await exampleConfig({ hours: 'open' }),
        redisUrl: `redis://127.0.0.1:${redisPort}`,
        processes: [],
      });
      const port = await findFreePort();
      extra =
        mode === 'work'
          ? await spawnBridge(
              'work',
              world.configPath,
              world.env,
              ['--port', String(port)],
              'worker is waiting',
            )
          : await spawnBridge('serve', world.configPath, world.env);
      const base = `http://127.0.0.1:${mode === 'work' ? port : world.env.PORT}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const readiness = await fetch(`${base}/readyz`);
      expect(readiness.status).toBe(503);
      expect(((await readiness.json()) as { error: string }).error).toMatch(/Redis/);
      expect(extra.logs.filter((line) => line.trim() !== '').length, extra.logs.join('\n')).toBeLessThan(10);
      redis = await startRedisServer({ port: redisPort });
      await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: `${mode}: /readyz 200 once Redis runs`,
      });
    },
  );
});
