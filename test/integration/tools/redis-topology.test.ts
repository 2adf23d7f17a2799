import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { keyInSlotRange, keySlot } from '../../../src/redis/key-slot.js';
import {
  type RedisClusterHandle,
  type RedisSentinelHandle,
  startRedisCluster,
  startRedisSentinel,
} from '../../../tools/redis/redis-topology.js';

/**
 * Real Redis Cluster and Sentinel topologies (tools/redis/redis-topology.ts): what a client sees
 * through ioredis, failover included, and that `stop` leaves no process behind. Each test starts
 * its own topology (about 2 s) and stops it in afterEach, failed or not.
 */

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `pgrep -a redis-server` lines (redis-server retitles itself "redis-server 127.0.0.1:<port> ..."). */
const redisServerLines = (): string[] => {
  try {
    return execFileSync('pgrep', ['-a', 'redis-server'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

/** Our ports that still have a redis-server listening, per `pgrep -a`. */
const leftoverPorts = (ports: readonly number[]) =>
  ports.filter((port) => redisServerLines().some((line) => new RegExp(`:${port}(?!\\d)`).test(line)));

const MOVE_TWO_KEYS = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('set', KEYS[2], ARGV[1])";

describe('startRedisCluster', () => {
  let topology: RedisClusterHandle | undefined;
  let client: Cluster | undefined;
  afterEach(async () => {
    client?.disconnect();
    await topology?.stop();
    client = undefined;
    topology = undefined;
  });

  const start = async () => {
    topology = await startRedisCluster();
    client = new Cluster([...topology.nodes]);
    return { cluster: topology, redis: client };
  };

  it('starts 3 primaries and 3 replicas that cover every slot; keySlot agrees with CLUSTER KEYSLOT', async () => {
    const { cluster } = await start();
    const primaries = await cluster.primaries();
    const replicas = await cluster.replicas();
    expect(primaries).toHaveLength(3);
    expect(replicas).toHaveLength(3);
    expect(cluster.nodes).toHaveLength(6);
    const covered = primaries
      .flatMap((primary) => primary.slots)
      .reduce((sum, [first, last]) => sum + last - first + 1, 0);
    expect(covered).toBe(16384);
    // Every primary has its own replica.
    expect(new Set(replicas.map((replica) => replica.primaryId))).toEqual(
      new Set(primaries.map((primary) => primary.id)),
    );

    const node = new Redis({ port: primaries[0]?.port ?? 0, host: '127.0.0.1', lazyConnect: true });
    try {
      for (const key of [
        'foo',
        '{user1000}.following',
        'foo{}{bar}',
        'foo{{bar}}zap',
        'é',
        'cb:{queue}:wait',
      ]) {
        expect(keySlot(key), key).toBe(await node.cluster('KEYSLOT', key));
      }
    } finally {
      node.disconnect();
    }
  });

  it('ioredis Cluster writes and reads keys in many slots, on every primary', async () => {
    const { cluster, redis } = await start();
    const keys = Array.from({ length: 300 }, (_unused, index) => `cb-topology:key-${index}`);
    await Promise.all(keys.map((key) => redis.set(key, `value of ${key}`)));
    expect(await Promise.all(keys.map((key) => redis.get(key)))).toEqual(
      keys.map((key) => `value of ${key}`),
    );
    expect(new Set(keys.map((key) => keySlot(key))).size).toBeGreaterThan(250);
    const primaries = await cluster.primaries();
    const ownerOf = (key: string) =>
      primaries.find((primary) =>
        primary.slots.some(([first, last]) => keySlot(key) >= first && keySlot(key) <= last),
      )?.port;
    expect(new Set(keys.map(ownerOf))).toEqual(new Set(primaries.map((primary) => primary.port)));
  });

  it('refuses EVAL and MULTI on keys of two slots (CROSSSLOT) and runs them on keys with one {tag}', async () => {
    const { cluster, redis } = await start();
    // Two keys in different slots served by the same primary: ioredis sends the command and the
    // server refuses it. (Keys on two primaries are refused by ioredis itself for MULTI.)
    const [first, last] = (await cluster.primaries())[0]?.slots[0] ?? [0, 0];
    const one = keyInSlotRange(first, last, 'cb-topology:a-');
    let other = keyInSlotRange(first, last, 'cb-topology:b-');
    for (let n = 0; keySlot(other) === keySlot(one); n += 1)
      other = keyInSlotRange(first, last, `cb-topology:b${n}-`);

    await expect(redis.eval(MOVE_TWO_KEYS, 2, one, other, 'x')).rejects.toThrow(/^CROSSSLOT/);
    await expect(redis.multi().set(one, 'x').set(other, 'x').exec()).rejects.toThrow(/^CROSSSLOT/);
    await expect(redis.eval(MOVE_TWO_KEYS, 2, 'foo', 'bar', 'x')).rejects.toThrow(/^CROSSSLOT/);
    await expect(redis.multi().set('foo', 'x').set('bar', 'x').exec()).rejects.toThrow(
      /same slots allocation group/,
    );
    expect(await redis.get(one)).toBeNull();

    await expect(redis.eval(MOVE_TWO_KEYS, 2, '{order-7}:a', '{order-7}:b', 'y')).resolves.toBe('OK');
    await expect(redis.multi().set('{order-7}:c', 'z').set('{order-7}:d', 'z').exec()).resolves.toEqual([
      [null, 'OK'],
      [null, 'OK'],
    ]);
    expect(await redis.mget('{order-7}:a', '{order-7}:b', '{order-7}:c', '{order-7}:d')).toEqual([
      'y',
      'y',
      'z',
      'z',
    ]);
  });

  it('fails over a killed primary: a key written with WAIT stays readable and writable; the old primary returns as a replica', async () => {
    const { cluster, redis } = await start();
    const key = 'cb-topology:{conversation-42}:last-event';
    // WAIT runs on the connection that made the write: a pipeline goes to one node.
    expect(await redis.pipeline().set(key, 'before').call('WAIT', '1', '1000').exec()).toEqual([
      [null, 'OK'],
      [null, 1],
    ]);

    const startedAt = Date.now();
    const killed = await cluster.killPrimaryOf(key);
    const promoted = await cluster.waitForFailover(killed, 30_000);
    const failoverMs = Date.now() - startedAt;
    expect(promoted.map((primary) => primary.port)).not.toContain(killed);
    expect((await cluster.primaries()).map((primary) => primary.port)).not.toContain(killed);
    expect(failoverMs).toBeLessThan(30_000);

    expect(await redis.get(key)).toBe('before');
    expect(await redis.set(key, 'after')).toBe('OK');
    expect(await redis.get(key)).toBe('after');

    await cluster.restartNode(killed);
    const returned = (await cluster.replicas()).find((replica) => replica.port === killed);
    expect(returned?.primaryId).toBe(promoted[0]?.id);
    expect(await redis.pipeline().set(key, 'again').call('WAIT', '1', '1000').exec()).toEqual([
      [null, 'OK'],
      [null, 1],
    ]);
  });

  it('stop kills every node and leaves no redis-server behind', async () => {
    const { cluster } = await start();
    const pids = cluster.pids();
    const ports = cluster.nodes.map((node) => node.port);
    expect(pids).toHaveLength(6);
    expect(leftoverPorts(ports)).toEqual(ports);
    client?.disconnect();
    await cluster.stop();
    await cluster.stop(); // idempotent
    expect(pids.filter(isAlive)).toEqual([]);
    expect(leftoverPorts(ports)).toEqual([]);
    expect(cluster.pids()).toEqual([]);
  });
});

describe('startRedisSentinel', () => {
  let topology: RedisSentinelHandle | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    client?.disconnect();
    await topology?.stop();
    client = undefined;
    topology = undefined;
  });

  it('fails over a killed primary: the same ioredis client reconnects through the sentinels, reads and writes', async () => {
    topology = await startRedisSentinel();
    const sentinel = topology;
    expect(sentinel.sentinels).toHaveLength(3);
    expect(sentinel.nodes).toHaveLength(2);
    client = new Redis({ sentinels: [...sentinel.sentinels], name: sentinel.name });
    const redis = client;
    // While no sentinel names a live primary yet the client reports connection errors and retries.
    const errors: string[] = [];
    redis.on('error', (error: Error) => errors.push(error.message));
    expect(await redis.set('cb-topology:event', 'before')).toBe('OK');
    expect(await redis.call('WAIT', '1', '1000')).toBe(1);

    const oldPrimary = (await sentinel.primary()).port;
    const killed = await sentinel.killPrimary();
    expect(killed).toBe(oldPrimary);
    const promoted = await sentinel.waitForFailover(killed, 30_000);
    expect(promoted.port).not.toBe(killed);

    expect(await redis.get('cb-topology:event')).toBe('before');
    expect(await redis.set('cb-topology:event', 'after')).toBe('OK');
    expect(await redis.info('server')).toMatch(new RegExp(`^tcp_port:${promoted.port}\\r?$`, 'm'));
    expect(
      errors.every((message) => /ECONNREFUSED|sentinels are unreachable/.test(message)),
      errors.join('\n'),
    ).toBe(true);

    await sentinel.restartNode(killed);
    expect(await redis.call('WAIT', '1', '1000')).toBe(1);

    // What the fault suite keeps of a failed failover row: every node's and sentinel's log.
    const dest = await mkdtemp(join(tmpdir(), 'cb-topology-logs-'));
    try {
      const files = await sentinel.saveLogs(dest);
      expect(files).toHaveLength(5);
      const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
      expect(texts.filter((text) => text.includes(`+switch-master ${sentinel.name}`))).toHaveLength(3);
      expect(texts.some((text) => text.includes('MASTER MODE enabled'))).toBe(true);
    } finally {
      await rm(dest, { recursive: true, force: true });
    }
  });

  it('waitForRejoin follows the sentinels when they elect the restarted node itself (a double failover)', async () => {
    topology = await startRedisSentinel({ replicas: 2 });
    const sentinel = topology;
    const killed = await sentinel.killPrimary();
    const promoted = await sentinel.waitForFailover(killed, 30_000);
    const other = sentinel.nodes.find((n) => n.port !== killed && n.port !== promoted.port);
    if (!other) throw new Error('no second replica');
    await sentinel.restartNode(killed);
    const call = async (port: number, ...args: string[]) => {
      const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
      redis.on('error', () => {});
      try {
        await redis.connect();
        const [command = 'PING', ...rest] = args;
        return await redis.call(command, ...rest);
      } finally {
        redis.disconnect();
      }
    };
    // The sentinels fail over once more and elect the restarted old primary (the only candidate:
    // the other replica may not be promoted), as they did in a failed full run of fault row 7.
    await call(other.port, 'CONFIG', 'SET', 'replica-priority', '0');
    const asker = sentinel.sentinels[0];
    if (!asker) throw new Error('no sentinel');
    // SENTINEL FAILOVER answers NOGOODSLAVE until the sentinel has fresh INFO of the restarted
    // node, INPROG while a failover runs: ask again until the node is promoted.
    await waitFor(
      async () => {
        if (((await call(killed, 'ROLE')) as unknown[])[0] === 'master') return true;
        await call(asker.port, 'SENTINEL', 'FAILOVER', sentinel.name).catch(() => undefined);
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 1_000, what: 'the restarted node to be promoted' },
    );
    await sentinel.waitForRejoin(killed);
    expect((await sentinel.primary()).port).toBe(killed);
    // And a replica rejoins the node that is now the primary.
    await sentinel.waitForRejoin(promoted.port);
  }, 120_000);

  it('password: the data nodes refuse a client without it; ioredis with `password` works', async () => {
    topology = await startRedisSentinel({ password: 'cb-test-pw-1' });
    const sentinel = topology;
    const { port } = await sentinel.primary();
    const anonymous = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableReadyCheck: false });
    anonymous.on('error', () => {});
    try {
      await expect(anonymous.set('cb-topology:x', '1')).rejects.toThrow(/NOAUTH/);
    } finally {
      anonymous.disconnect();
    }
    client = new Redis({ sentinels: [...sentinel.sentinels], name: sentinel.name, password: 'cb-test-pw-1' });
    expect(await client.set('cb-topology:x', '1')).toBe('OK');
    expect(await client.call('WAIT', '1', '1000')).toBe(1);
  });

  it('stop kills every process and leaves no redis-server behind', async () => {
    topology = await startRedisSentinel();
    const sentinel = topology;
    const pids = sentinel.pids();
    const ports = [...sentinel.nodes, ...sentinel.sentinels].map((node) => node.port);
    expect(pids).toHaveLength(5);
    await sentinel.stop();
    await sentinel.stop();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(leftoverPorts(ports)).toEqual([]);
  });
});

describe('topology start errors', () => {
  let scratch = '';
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'convo-bridge-topology-test-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** A stand-in for redis-server that passes the `--version` probe and then fails to start. */
  const failingServer = async () => {
    const file = join(scratch, 'failing-redis-server');
    await writeFile(
      file,
      '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Redis server v=7.0.0"; exit 0; fi\n' +
        'echo "*** FATAL CONFIG FILE ERROR: cb-test says no" >&2\nexit 1\n',
    );
    await chmod(file, 0o755);
    return file;
  };

  it.each([
    [
      'cluster, no redis-server',
      () => startRedisCluster({ binary: '/nonexistent/redis-server' }),
      /redis-server/,
    ],
    ['cluster, no redis-cli', () => startRedisCluster({ cliBinary: '/nonexistent/redis-cli' }), /redis-cli/],
    [
      'sentinel, no redis-server',
      () => startRedisSentinel({ binary: '/nonexistent/redis-server' }),
      /redis-server/,
    ],
  ])('%s: REDIS_SERVER_MISSING with the install hint', async (_name, startIt, binary) => {
    const failure = startIt();
    await expect(failure).rejects.toMatchObject({ code: 'REDIS_SERVER_MISSING' });
    await expect(failure).rejects.toThrow(binary);
    await expect(failure).rejects.toThrow(/apt-get install -y redis-server/);
  });

  it.each([
    ['cluster', (binary: string) => startRedisCluster({ binary })],
    ['sentinel', (binary: string) => startRedisSentinel({ binary })],
  ])('%s: a node that fails to start is reported with its stderr', async (_name, startIt) => {
    const failure = startIt(await failingServer());
    await expect(failure).rejects.toMatchObject({ code: 'REDIS_SERVER_EXITED' });
    await expect(failure).rejects.toThrow(/cb-test says no/);
  });

  it('a cluster of fewer than 3 primaries is refused', async () => {
    await expect(startRedisCluster({ primaries: 2 })).rejects.toMatchObject({
      code: 'REDIS_TOPOLOGY_OPTIONS',
    });
  });
});
