import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { runBridge } from '../../../src/bridge/run-bridge.js';
import type { RedisTopology } from '../../../src/config/redis-topology.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import type { EventStoreTarget } from '../../../src/receive/event-producer.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { uniqueName } from '../../support/redis.js';

const PASSWORD = 'pw-never-shown-7f3a';

/**
 * `/readyz` of a receiver whose Redis does not answer names where it looked, for every topology,
 * as docs/operations.md promises, and never the password of the URL or the config.
 */
describe('/readyz names the Redis it cannot reach', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  const readyzError = async (target: EventStoreTarget): Promise<string> => {
    receiver = createReceiver({
      secrets: ['s'],
      prefix: uniqueName('t-readyz'),
      enqueueTimeoutMs: 500,
      ...target,
    });
    const { url } = await receiver.listen();
    const answer = await waitFor(
      async () => {
        const response = await fetch(`${url}/readyz`);
        return response.status === 503 ? ((await response.json()) as { error: string }) : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: '/readyz to answer 503' },
    );
    return answer.error;
  };

  it('one Redis: host:port of redis.url, without its password', async () => {
    const port = await findFreePort();
    const error = await readyzError({ redisUrl: `redis://:${PASSWORD}@127.0.0.1:${port}/0` });
    expect(error).toBe(`Redis at 127.0.0.1:${port} does not accept writes; check that it is running`);
  });

  it('Sentinel: the primary name and every sentinel tried, without the passwords', async () => {
    const [a, b] = [await findFreePort(), await findFreePort()];
    const topology: RedisTopology = {
      kind: 'sentinel',
      sentinels: [
        { host: '127.0.0.1', port: a },
        { host: '127.0.0.1', port: b },
      ],
      name: 'mymaster',
      password: PASSWORD,
      sentinelPassword: PASSWORD,
      tls: false,
      db: 0,
    };
    const error = await readyzError({ topology });
    expect(error).toContain(`primary "mymaster" via sentinels 127.0.0.1:${a}, 127.0.0.1:${b}`);
    expect(error).not.toContain(PASSWORD);
  });

  it('Cluster: every start-up node tried, without the password', async () => {
    const [a, b, c] = [await findFreePort(), await findFreePort(), await findFreePort()];
    const topology: RedisTopology = {
      kind: 'cluster',
      nodes: [a, b, c].map((port) => ({ host: '127.0.0.1', port })),
      password: PASSWORD,
      tls: false,
    };
    const error = await readyzError({ topology });
    expect(error).toContain(`cluster via 127.0.0.1:${a}, 127.0.0.1:${b}, 127.0.0.1:${c}`);
    expect(error).not.toContain(PASSWORD);
  });

  it('plain ioredis options: their host and port', async () => {
    const port = await findFreePort();
    const error = await readyzError({ redis: { host: '127.0.0.1', port, password: PASSWORD } });
    expect(error).toBe(`Redis at 127.0.0.1:${port} does not accept writes; check that it is running`);
  });

  it.each([
    ['start', 'does not accept writes; check that it is running'],
    ['work', 'does not answer'],
  ] as const)('a bridge (%s) says the same, from its config', async (mode, says) => {
    const port = await findFreePort();
    const dir = await mkdtemp(join(tmpdir(), 'readyz-'));
    const config = join(dir, 'bridge.yaml');
    await writeFile(
      config,
      `platform: { base_url: "http://127.0.0.1:9", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { host: 127.0.0.1, port: 0, secrets: [ "w" ] }
redis: { url: "redis://:${PASSWORD}@127.0.0.1:${port}", prefix: ${uniqueName('t-readyz')} }
`,
    );
    const bridge = await runBridge({
      mode,
      configPath: config,
      env: {},
      logger: pino({ level: 'silent' }),
      outageReportIntervalMs: 60_000,
      ...(mode === 'work' ? { port: 0 } : {}),
    });
    try {
      const answer = await waitFor(
        async () => {
          const response = await fetch(`${bridge.url}/readyz`);
          return response.status === 503 ? ((await response.json()) as { error: string }) : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 100, what: '/readyz to answer 503' },
      );
      expect(answer.error).toBe(`Redis at 127.0.0.1:${port} ${says}`);
    } finally {
      await bridge.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
