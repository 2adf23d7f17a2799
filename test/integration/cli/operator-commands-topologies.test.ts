import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { keySlot } from '../../../src/redis/key-slot.js';
import type { RedisClient } from '../../../src/redis/redis-client.js';
import { addDeadLetter } from '../../../src/worker/failures/dead-letters.js';
import {
  type RedisClusterHandle,
  type RedisSentinelHandle,
  startRedisCluster,
  startRedisSentinel,
} from '../../../tools/redis/redis-topology.js';
import { cli } from '../../support/cli-in-process.js';

const PLATFORM =
  'platform:\n  base_url: https://api.example.com\n  auth: { scheme: headers, business_id: b, secret: s }\nreceiver: {}\n';

/**
 * Issue 14: the operator commands reach the bridge's data through Sentinel and on a cluster, the
 * same way `start` does (one connection factory), with the layout the config asks for.
 */
describe('operator commands on Sentinel and on a Redis Cluster', () => {
  let sentinel: RedisSentinelHandle;
  let cluster: RedisClusterHandle;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convo-bridge-topology-cli-'));
    sentinel = await startRedisSentinel({ replicas: 1, sentinels: 3 });
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
  });
  afterAll(async () => {
    await sentinel?.stop();
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const topologies = () => [
    {
      name: 'sentinel',
      shards: 1,
      redis: `redis:\n  sentinels: [ ${sentinel.sentinels.map((s) => `"${s.host}:${s.port}"`).join(', ')} ]\n  name: ${sentinel.name}\n  prefix: ops\n`,
      connect: async (): Promise<RedisClient> =>
        new Redis({ sentinels: sentinel.sentinels.map((s) => ({ ...s })), name: sentinel.name }),
      address: `primary "${sentinel.name}" via sentinels`,
    },
    {
      name: 'cluster',
      shards: 6,
      redis: `redis:\n  cluster:\n    nodes: [ "${cluster.nodes[0]?.host}:${cluster.nodes[0]?.port}" ]\n  shards: 6\n  prefix: ops\n`,
      connect: async (): Promise<RedisClient> => new Cluster(cluster.nodes.map((n) => ({ ...n }))),
      address: 'cluster via',
    },
  ];

  it.each(['sentinel', 'cluster'])(
    '%s: dlq list/show/retry, quarantine list, timers list and reshard --check',
    async (name) => {
      const t = topologies().find((x) => x.name === name);
      if (!t) throw new Error(name);
      const config = join(dir, `${name}.yaml`);
      await writeFile(config, `${PLATFORM}${t.redis}`);
      const layout = createKeyLayout({ prefix: 'ops', shards: t.shards, tagged: name === 'cluster' });
      const redis = await t.connect();
      try {
        const event = { key: 'channel.message_in|m-1', conversationId: 'c-ops-1' };
        await addDeadLetter(redis, layout.global, {
          id: 'dl-1',
          queue: 'events',
          jobId: 'b-1',
          jobName: 'events',
          reason: 'conversation not found',
          code: 'UNRECOVERABLE',
          attempts: 1,
          failedAt: new Date().toISOString(),
          conversationId: event.conversationId,
          eventKey: event.key,
          data: { events: [] },
          actions: [],
          replays: 0,
        });
        await quarantineBody(
          { redis, keys: layout.global },
          {
            reason: 'unknown_event',
            message: 'unknown event name',
            eventName: 'x.y',
            conversationId: null,
            rawBody: Buffer.from('{"event":"x.y"}'),
            receivedAt: new Date(),
          },
        );

        const list = await cli(['dlq', 'list', '--config', config]);
        expect(list.stderr).toBe('');
        expect(list.stdout).toContain(`1 dead letter(s) under prefix "ops" at ${t.address}`);
        expect(list.stdout).toContain('c-ops-1');
        const show = await cli(['dlq', 'show', 'dl-1', '--config', config]);
        expect(JSON.parse(show.stdout)).toMatchObject({ id: 'dl-1', conversationId: 'c-ops-1' });
        const quarantined = await cli(['quarantine', 'list', '--config', config]);
        expect(quarantined.stderr).toBe('');
        expect(quarantined.stdout).toContain(`1 quarantined body under prefix "ops" at ${t.address}`);
        const timers = await cli(['timers', 'list', '--config', config]);
        expect(timers.code).toBe(0);
        expect(timers.stdout).toContain('no pending timers under prefix "ops"');

        // A replay goes to the queue of the conversation's shard (where its run state lives).
        const retried = await cli(['dlq', 'retry', 'dl-1', '--config', config]);
        expect(retried.stderr).toBe('');
        expect(retried.stdout).toContain('requeued dl-1 as job dl-1-replay1');
        const shard = layout.shardOf(event.conversationId);
        expect(await redis.exists(`${shard.queuePrefix}:events:dl-1-replay1`)).toBe(1);

        // Not drained (the replayed job waits): reshard refuses, naming it.
        const check = await cli(['reshard', '--to', String(t.shards), '--check', '--config', config]);
        expect(check.code).toBe(2);
        expect(check.stderr).toMatch(
          /not ready to reshard: 1 event batch job\(s\)( in shard \d)? are not finished/,
        );
      } finally {
        redis.disconnect();
      }
    },
  );

  it('a database Redis refuses stops the command: a cluster node with /N, a Sentinel redis.db the primary lacks', async () => {
    // Issue 30, item 4: a cluster has only database 0; ioredis went on in database 0 after the
    // refused SELECT. A node's URL with /0 still reaches the whole cluster.
    const node = `redis://${cluster.nodes[0]?.host}:${cluster.nodes[0]?.port}`;
    const onCluster = await cli(['dlq', 'list', '--redis-url', `${node}/2`, '--prefix', 'ops']);
    expect(onCluster.code).toBe(1);
    expect(onCluster.stdout).toBe('');
    expect(onCluster.stderr).toContain(
      `${node}/2 from --redis-url: Redis at ${node.slice(8)} refused database 2`,
    );
    expect(onCluster.stderr).toContain(
      'a node of a Redis Cluster, which has only database 0: drop the /N of the URL',
    );
    const zero = await cli(['dlq', 'list', '--redis-url', `${node}/0`, '--prefix', 'ops-none']);
    expect(zero.code).toBe(0);
    expect(zero.stdout).toContain(`no dead letters under prefix "ops-none" at ${node.slice(8)} db 0`);

    const config = join(dir, 'sentinel-db.yaml');
    await writeFile(
      config,
      `${PLATFORM}redis:\n  sentinels: [ ${sentinel.sentinels.map((s) => `"${s.host}:${s.port}"`).join(', ')} ]\n  name: ${sentinel.name}\n  db: 99\n  prefix: ops\n`,
    );
    const viaSentinel = await cli(['timers', 'list', '--config', config]);
    expect(viaSentinel.code).toBe(1);
    expect(viaSentinel.stderr).toContain(
      `${config} (redis.sentinels): Redis at primary "${sentinel.name}" via sentinels`,
    );
    expect(viaSentinel.stderr).toContain('refused database 99 (ERR DB index is out of range)');
    expect(viaSentinel.stderr).toContain('give one of them in redis.db');
  });

  it('cluster: the hint of an empty listing scans every primary and names prefixes as --prefix takes them', async () => {
    // Issue 29, item 5: one dead letter under a prefix of its own on each primary, and timers of
    // another prefix in a shard of its own (key tag `{hint-timers:<n>...}`).
    const primaries = await cluster.primaries();
    const redis = new Cluster(cluster.nodes.map((n) => ({ ...n })));
    try {
      const prefixes: string[] = [];
      for (const primary of primaries) {
        let n = 0;
        const onPrimary = (candidate: string) =>
          primary.slots.some(([start, end]) => {
            const slot = keySlot(`{${candidate}}`);
            return slot >= start && slot <= end;
          });
        while (!onPrimary(`hint-${n}`)) n += 1;
        const prefix = `hint-${n}`;
        prefixes.push(prefix);
        const layout = createKeyLayout({ prefix, shards: 1, tagged: true });
        await addDeadLetter(redis, layout.global, {
          id: `dl-${prefix}`,
          queue: 'events',
          jobId: 'b-1',
          jobName: 'events',
          reason: 'conversation not found',
          code: 'UNRECOVERABLE',
          attempts: 1,
          failedAt: new Date().toISOString(),
          conversationId: 'c-hint',
          eventKey: 'channel.message_in|m-hint',
          data: { events: [] },
          actions: [],
          replays: 0,
        });
      }
      const timerShard = createKeyLayout({ prefix: 'hint-timers', shards: 6, tagged: true }).all[2];
      const timers = new Queue('timers', { connection: redis, prefix: timerShard?.queuePrefix ?? '' });
      await timers.add('timer', {}, { delay: 3_600_000, jobId: 't-hint' });
      await timers.close();

      const config = join(dir, 'hint.yaml');
      await writeFile(
        config,
        `${PLATFORM}redis:\n  cluster:\n    nodes: [ "${cluster.nodes[0]?.host}:${cluster.nodes[0]?.port}" ]\n  shards: 6\n  prefix: nothing-here\n`,
      );
      const list = await cli(['dlq', 'list', '--config', config]);
      expect(list.stdout).toContain('no dead letters under prefix "nothing-here"');
      for (const prefix of prefixes) expect(list.stdout).toContain(`"${prefix}"`);
      expect(list.stdout).not.toContain('{');
      const pending = await cli(['timers', 'list', '--config', config]);
      expect(pending.stdout).toContain('no pending timers under prefix "nothing-here"');
      expect(pending.stdout).toContain('"hint-timers"');
      expect(pending.stdout).toContain('pass --prefix hint-timers');
    } finally {
      redis.disconnect();
    }
  });
});
