import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { keyInSlotRange } from '../../../src/redis/key-slot.js';
import { createRedisClient } from '../../../src/redis/redis-connection.js';
import {
  type RedisClusterHandle,
  type RedisSentinelHandle,
  startRedisCluster,
  startRedisSentinel,
} from '../../../tools/redis/redis-topology.js';
import { cli } from '../../support/cli-in-process.js';

/**
 * Issue 29, item 3: a Redis Cluster and a Sentinel setup given by redis:// URLs, with the
 * credentials in the URLs only, reached the way every part of the bridge reaches Redis (config ->
 * topology -> createRedisClient) and by an operator command; the passwords never printed.
 */

const PLATFORM =
  'platform:\n  base_url: https://api.example.com\n  auth: { scheme: headers, business_id: b, secret: s }\nreceiver: {}\n';
const CLUSTER_PW = 'cluster-pw-4f1d';
const DATA_PW = 'data-pw-77c2';
const SENTINEL_PW = 'sentinel-pw-9a3e';
const PASSWORDS = [CLUSTER_PW, DATA_PW, SENTINEL_PW];

describe('redis:// URLs in redis.cluster.nodes and redis.sentinels, on real servers', () => {
  let cluster: RedisClusterHandle;
  let sentinel: RedisSentinelHandle;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-redis-urls-'));
    [cluster, sentinel] = await Promise.all([
      startRedisCluster({ primaries: 3, replicasPerPrimary: 0, password: CLUSTER_PW }),
      startRedisSentinel({ replicas: 1, sentinels: 3, password: DATA_PW, sentinelPassword: SENTINEL_PW }),
    ]);
  });
  afterAll(async () => {
    await cluster?.stop();
    await sentinel?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const configFile = async (name: string, redis: string) => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, `${PLATFORM}${redis}`);
    return file;
  };
  const clusterConfig = (password: string) =>
    configFile(
      // Not named after the password: the file's name is in messages.
      `cluster-${password === CLUSTER_PW ? 'right' : 'wrong'}`,
      `redis:\n  cluster:\n    nodes:\n${cluster.nodes
        .slice(0, 2)
        .map((n) => `      - redis://:${password}@${n.host}:${n.port}\n`)
        .join('')}  shards: 3\n  prefix: urls\n`,
    );
  const sentinelConfig = (url: (host: string, port: number) => string) =>
    configFile(
      `sentinel-${url('h', 1).includes('@') ? 'with' : 'without'}-password`,
      `redis:\n  sentinels:\n${sentinel.sentinels.map((s) => `    - ${url(s.host, s.port)}\n`).join('')}  name: ${sentinel.name}\n  password: ${DATA_PW}\n  prefix: urls\n`,
    );
  const expectNoPassword = (...texts: string[]) => {
    for (const password of PASSWORDS) expect(texts.join('\n')).not.toContain(password);
  };

  it('a cluster given by redis://:password@ URLs: every primary reached, the discovered ones too', async () => {
    const file = await clusterConfig(CLUSTER_PW);
    const { config } = await loadConfig(file, { env: {} });
    expect(config.redis.topology).toMatchObject({ kind: 'cluster', password: CLUSTER_PW, tls: false });
    const redis = createRedisClient(config.redis.topology, { maxRetriesPerRequest: 1 });
    try {
      // One key in every primary's slots: the client authenticated to nodes it was not given.
      for (const primary of await cluster.primaries()) {
        for (const [start, end] of primary.slots) {
          const key = keyInSlotRange(start, end);
          await redis.set(key, 'via-url', 'PX', 10_000);
          expect(await redis.get(key)).toBe('via-url');
        }
      }
      expect(redis).toBeInstanceOf(Cluster);
      expect((redis as Cluster).nodes('master')).toHaveLength(3);
    } finally {
      redis.disconnect();
    }

    const validate = await cli(['validate', '--config', file]);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toContain('Redis Cluster, cluster via 127.0.0.1:');
    expect(validate.stdout).toContain('password set, TLS off');
    const list = await cli(['dlq', 'list', '--config', file]);
    expect(list.stderr).toBe('');
    expect(list.stdout).toContain('no dead letters under prefix "urls"');
    expectNoPassword(validate.stdout, validate.stderr, list.stdout);
  });

  it('a cluster given by URLs with a wrong password: refused, and the password not shown', async () => {
    const file = await clusterConfig('wrong-pw-31b');
    const list = await cli(['dlq', 'list', '--config', file]);
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(
      /cannot reach Redis at cluster via 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+ \(from .*cluster-wrong\.yaml \(redis\.cluster\.nodes\)\)/,
    );
    // The node's own answer, not the cluster client's "Failed to refresh slots cache.".
    expect(list.stderr).toContain('WRONGPASS');
    expect(list.stderr).toContain(
      'give the user and password Redis expects (in the URLs of redis.cluster.nodes',
    );
    expect(list.stderr).not.toContain('wrong-pw-31b');
  });

  it('sentinels given by redis://:password@ URLs (their own password), the data password apart', async () => {
    const file = await sentinelConfig((host, port) => `redis://:${SENTINEL_PW}@${host}:${port}`);
    const { config } = await loadConfig(file, { env: {} });
    expect(config.redis.topology).toMatchObject({
      kind: 'sentinel',
      password: DATA_PW,
      sentinelPassword: SENTINEL_PW,
      tls: false,
    });
    const redis = createRedisClient(config.redis.topology, { maxRetriesPerRequest: 1 });
    try {
      await redis.set('urls-probe', 'via-sentinel-url', 'PX', 10_000);
      expect(await redis.get('urls-probe')).toBe('via-sentinel-url');
      expect(((await redis.call('ROLE')) as unknown[])[0]).toBe('master');
    } finally {
      redis.disconnect();
    }

    const validate = await cli(['validate', '--config', file]);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toContain('password set, sentinels: password set, TLS off');
    const list = await cli(['dlq', 'list', '--config', file]);
    expect(list.stderr).toBe('');
    expect(list.stdout).toContain(`no dead letters under prefix "urls" at primary "${sentinel.name}"`);
    expectNoPassword(validate.stdout, validate.stderr, list.stdout);
  });

  it('sentinels given by URLs without their password: refused (the URL is what authenticates)', async () => {
    const file = await sentinelConfig((host, port) => `redis://${host}:${port}`);
    const list = await cli(['dlq', 'list', '--config', file]);
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(`cannot reach Redis at primary "${sentinel.name}" via sentinels`);
    expect(list.stderr).toContain('NOAUTH');
    expectNoPassword(list.stderr);
  });
});
