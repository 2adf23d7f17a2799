import { describe, expect, it } from 'vitest';
import { describeRedisConfig } from '../../../src/cli/describe-redis.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const base =
  'platform:\n  base_url: https://api.example.com\n  auth: { scheme: headers, business_id: b, secret: s }\nreceiver: {}\n';
const parse = (redis: string) =>
  parseConfigText(`${base}${redis}`, { fileName: 'inline.yaml', env: {} }).config;
const problems = (redis: string): string[] => {
  try {
    parse(redis);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => i.message);
    throw error;
  }
  return [];
};

// Issue 14, "Redis topologies in the config".
describe('redis topology config', () => {
  it('defaults to one local Redis, one untagged shard, no replica wait', () => {
    const { redis } = parse('');
    expect(redis.topology).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379' });
    expect(redis).toMatchObject({ prefix: 'cb', shards: 1, replicasAck: 0, replicasAckTimeoutMs: 500 });
  });

  it('reads Sentinel: sentinels as host:port or objects, the primary name, both passwords, TLS', () => {
    const { redis } = parse(
      'redis:\n  sentinels: [ "10.0.0.1:26379", { host: s2.internal, port: 26380 } ]\n  name: mymaster\n  password: data-pw\n  sentinel_password: sent-pw\n  tls: true\n  db: 2\n',
    );
    expect(redis.topology).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 's2.internal', port: 26380 },
      ],
      name: 'mymaster',
      password: 'data-pw',
      sentinelPassword: 'sent-pw',
      tls: true,
      db: 2,
    });
    // With replicas, an acknowledged event waits for one of them by default.
    expect(redis.replicasAck).toBe(1);
  });

  it('reads a cluster with its start-up nodes and shard count', () => {
    const { redis } = parse(
      'redis:\n  cluster:\n    nodes: [ "127.0.0.1:7000", "[::1]:7001" ]\n  shards: 6\n  replicas_ack: 0\n',
    );
    expect(redis.topology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      tls: false,
    });
    expect(redis.shards).toBe(6);
    expect(redis.replicasAck).toBe(0);
  });

  it.each([
    [
      'redis:\n  url: redis://x:6379\n  cluster: { nodes: [ "a:1" ] }\n',
      /give one of url, sentinels \(with name\) or cluster, not url and cluster/,
    ],
    ['redis:\n  sentinels: [ "a:26379" ]\n', /^redis\.name: sentinels need the primary's name/],
    ['redis:\n  name: mymaster\n', /^redis\.name: name is only used with sentinels/],
    [
      'redis:\n  url: redis://x:6379\n  password: p\n',
      /^redis\.password: password is for sentinels or cluster; with url put the credentials in the URL/,
    ],
    ['redis:\n  sentinels: [ "a" ]\n  name: m\n', /^redis\.sentinels\.0: expected host:port/],
    ['redis:\n  cluster: { nodes: [] }\n', /^redis\.cluster\.nodes: list at least one cluster node/],
    ['redis:\n  cluster: { nodes: [ "a:1" ] }\n  db: 3\n', /^redis\.db: a Redis Cluster has only database 0/],
    [
      'redis:\n  url: redis://x:6379\n  tls: true\n',
      /^redis\.tls: tls is for sentinels or cluster; with url, write rediss:\/\/ for TLS/,
    ],
    ['redis:\n  db: 2\n', /^redis\.db: db is for sentinels; with url, put the database in the URL/],
    ['redis:\n  shards: 0\n', /^redis\.shards: /],
    ['redis:\n  shards: 200\n', /^redis\.shards: /],
    [
      'redis:\n  shards: 2\nworker:\n  shards: [ 0, 2 ]\n',
      /^worker\.shards\.1: shard 2 does not exist: redis\.shards is 2, so shards are numbered 0 to 1/,
    ],
  ])('rejects %j with a message that says what to change', (yaml, message) => {
    expect(problems(yaml).join('\n')).toMatch(message);
  });

  it('validate explains each topology, its key layout and what an acknowledgement guarantees', () => {
    const single = describeRedisConfig(parse('redis:\n  url: redis://:hunter2@db:6379\n').redis).join('\n');
    expect(single).toContain('redis://:***@db:6379: one Redis (prefix cb)');
    expect(single).toContain('keys: 1 queue shard, keys under "cb:" (single Redis layout)');
    expect(single).not.toContain('hunter2');

    const sentinel = describeRedisConfig(
      parse('redis:\n  sentinels: [ "a:26379" ]\n  name: mymaster\n  password: hunter2\n').redis,
    ).join('\n');
    expect(sentinel).toContain(
      'Sentinel: primary "mymaster" via sentinels a:26379, db 0, password set, TLS off',
    );
    expect(sentinel).toContain('warning: 1 sentinel(s) listed');
    expect(sentinel).toContain('once its event is on the primary and 1 replica(s)');
    expect(sentinel).not.toContain('hunter2');

    const cluster = describeRedisConfig(parse('redis:\n  cluster: { nodes: [ "n1:7000" ] }\n').redis).join(
      '\n',
    );
    expect(cluster).toContain('Redis Cluster, cluster via n1:7000');
    expect(cluster).toContain('warning: redis.shards is 1');
    expect(cluster).toContain('keys: 1 queue shard(s) under hash tags {cb:0');

    const sharded = describeRedisConfig(parse('redis:\n  shards: 4\n').redis).join('\n');
    expect(sharded).toMatch(
      /keys: 4 queue shard\(s\) under hash tags \{cb:0[^}]*\}, \{cb:1[^}]*\}, \{cb:2[^}]*\}, \.\.\.; keys of no conversation under "\{cb\}:"/,
    );
  });
});
