import { readFile, writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { type RedisServerHandle, startRedisServer } from '../../../src/redis/start-redis-server.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

const GREET = `  - name: greet
    on: message_in
    if: { text: { any_keywords: [ halo ] } }
    then: [ { note: "greeted {{customer.name}}" } ]`;

describe('a running bridge: hot reload and Redis settings', () => {
  let world: World | undefined;
  let redisServer: RedisServerHandle | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
    await redisServer?.stop();
    redisServer = undefined;
  });

  it('takes a valid config change without a restart, and keeps the old rules when the new file is invalid', async () => {
    // Done jobs kept: the test reads that the first message's run finished from its result.
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', retention: { done_events: '1h' } }),
    });
    const w = world;
    const [bridge] = w.bridges;
    w.conversation('r-1', { type: 'webchat', id: 'ch_web' }, 'Nina');
    const first = w.say('r-1', 'halo');
    await waitFor(
      async () => (await w.eventRun(`channel.message_in|${first.messageId}`))?.result !== undefined,
      {
        timeoutMs: 10_000,
        what: 'the first message to be planned',
      },
    );
    expect(w.notes('r-1')).toEqual([]);

    // A new rule, written to the file in place (editors may also rename a new file over it).
    const original = await readFile(w.configPath, 'utf8');
    await writeFile(w.configPath, `${original.trimEnd()}\n${GREET}\n`);
    await waitFor(() => bridge?.logs.some((l) => l.includes('config reloaded')), {
      timeoutMs: 10_000,
      what: 'the reload to be logged',
    });
    w.say('r-1', 'halo lagi');
    await waitFor(() => w.notes('r-1').length === 1, { timeoutMs: 10_000, what: 'the new rule to act' });
    expect(w.notes('r-1')).toEqual(['greeted Nina']);

    // An invalid file: the previous rules stay in force and the log says why, with the position.
    await writeFile(w.configPath, `${original.trimEnd()}\n${GREET}\n  - name: broken\n    on: mesage_in\n`);
    await waitFor(() => bridge?.logs.some((l) => l.includes('config change rejected')), {
      timeoutMs: 10_000,
      what: 'the rejection to be logged',
    });
    const rejection = bridge?.logs.find((l) => l.includes('config change rejected')) ?? '';
    expect(rejection).toMatch(/bridge\.yaml:\d+:\d+: rules\.\d+\.on/);
    w.say('r-1', 'halo sekali lagi');
    await waitFor(() => w.notes('r-1').length === 2, {
      timeoutMs: 10_000,
      what: 'the kept rule to act again',
    });
    const metrics = await (await fetch(`http://127.0.0.1:${w.env.PORT}/metrics`)).text();
    expect(metrics).toMatch(/convo_bridge_config_reloads_total\{result="ok"\} 1/);
    expect(metrics).toMatch(/convo_bridge_config_reloads_total\{result="invalid"\} 1/);
  });

  it('says loudly at start when Redis may evict keys (maxmemory-policy other than noeviction)', async () => {
    redisServer = await startRedisServer();
    const admin = new Redis(redisServer.url);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await admin.quit();
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }), redisUrl: redisServer.url });
    const bridge = world.bridges[0];
    // The check runs once the bridge's Redis connection is up, which may be after it listens.
    const warning = await waitFor(
      () => bridge?.jsonLogs().find((line) => String(line.msg).includes('maxmemory-policy')),
      { timeoutMs: 10_000, what: 'the maxmemory-policy warning' },
    );
    expect(warning).toMatchObject({ level: 50, policy: 'allkeys-lru' });
    expect(String(warning?.msg)).toContain('noeviction');
  });
});
