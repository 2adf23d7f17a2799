import { describe, expect, it } from 'vitest';
import { describeRedisConfig } from '../../../src/cli/describe-redis.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

// Issue 29, item 3: redis:// and rediss:// URLs wherever a Redis address is taken.

const base =
  'platform:\n  base_url: https://api.example.com\n  auth: { scheme: headers, business_id: b, secret: s }\nreceiver: {}\n';
const parse = (redis: string) =>
  parseConfigText(`${base}${redis}`, { fileName: 'inline.yaml', env: {} }).config;
/** `file:line:col: message` of every problem, as `validate` prints them. */
const problems = (redis: string): string[] => {
  try {
    parse(redis);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  return [];
};
const cluster = (...nodes: string[]) =>
  `redis:\n  cluster:\n    nodes:\n${nodes.map((n) => `      - ${JSON.stringify(n)}\n`).join('')}`;
const sentinels = (...entries: string[]) =>
  `redis:\n  name: mymaster\n  sentinels:\n${entries.map((n) => `    - ${JSON.stringify(n)}\n`).join('')}`;

/** A password no message, description or log line may ever show. */
const PW = 'hunter2-xyz';

describe('redis addresses as URLs: accepted forms', () => {
  it.each([
    {
      name: 'host:port and {host, port} as before (no TLS, no credentials)',
      yaml: 'redis:\n  cluster:\n    nodes: [ "10.0.0.1:7000", { host: n2, port: 7001 } ]\n',
      topology: {
        kind: 'cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: 'n2', port: 7001 },
        ],
        tls: false,
      },
    },
    {
      name: 'redis:// URLs with a password only (the default user)',
      yaml: cluster(`redis://:${PW}@n1:7000`, `redis://:${PW}@n2:7001`),
      topology: {
        kind: 'cluster',
        nodes: [
          { host: 'n1', port: 7000 },
          { host: 'n2', port: 7001 },
        ],
        password: PW,
        tls: false,
      },
    },
    {
      name: 'rediss:// URLs with a user: TLS on, the ACL user and password lifted into the topology',
      yaml: cluster(`rediss://app:${PW}@n1.example.com:6380`, `rediss://app:${PW}@n2.example.com:6380/0`),
      topology: {
        kind: 'cluster',
        nodes: [
          { host: 'n1.example.com', port: 6380 },
          { host: 'n2.example.com', port: 6380 },
        ],
        username: 'app',
        password: PW,
        tls: true,
      },
    },
    {
      name: 'a URL without a port takes 6379; IPv6 in brackets; %-escapes decoded',
      yaml: cluster('redis://:p%40ss%2Fw@redis.internal', 'redis://[::1]:7001'),
      topology: {
        kind: 'cluster',
        nodes: [
          { host: 'redis.internal', port: 6379 },
          { host: '::1', port: 7001 },
        ],
        password: 'p@ss/w',
        tls: false,
      },
    },
    {
      name: 'URLs mixed with host:port: the bare entries take the URLs’ credentials and TLS',
      yaml: cluster(`rediss://:${PW}@n1:7000`, 'n2:7001', 'rediss://n3:7002'),
      topology: {
        kind: 'cluster',
        nodes: [
          { host: 'n1', port: 7000 },
          { host: 'n2', port: 7001 },
          { host: 'n3', port: 7002 },
        ],
        password: PW,
        tls: true,
      },
    },
    {
      name: 'the same credentials in the URLs and in redis.username/redis.password',
      yaml: `${cluster(`redis://app:${PW}@n1:7000`)}  username: app\n  password: ${PW}\n`,
      topology: {
        kind: 'cluster',
        nodes: [{ host: 'n1', port: 7000 }],
        username: 'app',
        password: PW,
        tls: false,
      },
    },
    {
      name: 'rediss:// beside tls: true',
      yaml: `${cluster('rediss://n1:7000')}  tls: true\n`,
      topology: { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }], tls: true },
    },
    {
      name: 'sentinel URLs: their credentials are the sentinels’ own, 26379 by default, the data password apart',
      yaml: `${sentinels(`rediss://sentinel-user:${PW}@s1:26380`, `rediss://sentinel-user:${PW}@s2`)}  password: data-pw\n`,
      topology: {
        kind: 'sentinel',
        sentinels: [
          { host: 's1', port: 26380 },
          { host: 's2', port: 26379 },
        ],
        name: 'mymaster',
        password: 'data-pw',
        sentinelUsername: 'sentinel-user',
        sentinelPassword: PW,
        tls: true,
        db: 0,
      },
    },
  ])('$name', ({ yaml, topology }) => {
    expect(parse(yaml).redis.topology).toEqual(topology);
  });
});

describe('redis addresses as URLs: refused forms, each with what to change', () => {
  it.each([
    [
      'an http:// address',
      cluster('http://n1:7000'),
      'inline.yaml:8:9: redis.cluster.nodes.0: http:// is not a Redis address: write redis://[user:password@]host:port or rediss://...',
    ],
    [
      'a port out of range (the URL is not quoted: it may hold a password)',
      cluster(`redis://:${PW}@n1:99999`),
      'inline.yaml:8:9: redis.cluster.nodes.0: is not a valid URL (a port from 1 to 65535, a password with / ? # @ written %2F %3F %23 %40): write redis://[user:password@]host:port',
    ],
    [
      'a space in a URL (quoted, with its password hidden)',
      cluster(`redis://:${PW}@n1 :7000`),
      'inline.yaml:8:9: redis.cluster.nodes.0: expected host:port, redis://[user:password@]host:port or rediss://... (TLS), e.g. 10.0.0.5:26379, got "redis://***@n1 :7000"',
    ],
    [
      'a password with an unescaped #',
      cluster(`redis://:${PW}#x@n1:7000`),
      'inline.yaml:8:9: redis.cluster.nodes.0: is not a valid URL',
    ],
    [
      'a bare host:port with port 0',
      cluster('n1:0'),
      'inline.yaml:8:9: redis.cluster.nodes.0: expected host:port, redis://[user:password@]host:port or rediss://... (TLS), e.g. 10.0.0.5:26379 (a port from 1 to 65535), got "n1:0"',
    ],
    ['no host', cluster(`redis://:${PW}@:7000`), 'inline.yaml:8:9: redis.cluster.nodes.0: '],
    [
      'a database other than 0 on a cluster node',
      cluster('redis://n1:7000/2'),
      'inline.yaml:8:9: redis.cluster.nodes.0: a Redis Cluster has only database 0: drop the /N',
    ],
    [
      'a database on a sentinel',
      sentinels('redis://s1:26379/1'),
      'inline.yaml:8:7: redis.sentinels.0: a sentinel address takes no database: drop the /N and set redis.db',
    ],
    [
      'URL options',
      cluster(`rediss://:${PW}@n1:7000?tls=false`),
      'inline.yaml:8:9: redis.cluster.nodes.0: URL options (?... or #...) are not read here: drop them and set redis.tls, redis.username or redis.password instead',
    ],
    [
      'a user without a password',
      cluster('redis://app@n1:7000'),
      'inline.yaml:8:9: redis.cluster.nodes.0: names a user but no password: write redis://user:password@host:port (or redis://:password@host:port without an ACL user)',
    ],
    [
      'a broken %-escape',
      cluster(`redis://:${PW}%zz@n1:7000`),
      'inline.yaml:8:9: redis.cluster.nodes.0: has a broken %-escape in its user or password',
    ],
    [
      'TLS and plain nodes mixed',
      cluster('rediss://n1:7000', 'n2:7001', 'redis://n3:7002'),
      'inline.yaml:10:9: redis.cluster.nodes.2: this address is redis:// (no TLS) but redis.cluster.nodes.0 is rediss:// (TLS): every node is reached the same way, so write rediss:// for all of them (TLS) or redis:// for all',
    ],
    [
      'redis:// beside tls: true',
      `${cluster('redis://n1:7000')}  tls: true\n`,
      'inline.yaml:8:9: redis.cluster.nodes.0: this address is redis:// (no TLS) but redis.tls is true: drop redis.tls (the URLs say it) or make them agree',
    ],
    [
      'rediss:// beside tls: false',
      `${sentinels('rediss://s1:26379')}  tls: false\n`,
      'inline.yaml:8:7: redis.sentinels.0: this address is rediss:// (TLS) but redis.tls is false',
    ],
    [
      'different passwords on different nodes',
      cluster(`redis://:${PW}@n1:7000`, `redis://:${PW}-other@n2:7001`),
      "inline.yaml:9:9: redis.cluster.nodes.1: this URL's user or password differs from that of redis.cluster.nodes.0: one client reaches every node with the same credentials; give the same user:password in every URL, or once in redis.username and redis.password",
    ],
    [
      'the same password for different users',
      sentinels(`redis://a:${PW}@s1:26379`, `redis://b:${PW}@s2:26379`),
      "inline.yaml:9:7: redis.sentinels.1: this URL's user or password differs from that of redis.sentinels.0: one client reaches every node with the same credentials; give the same user:password in every URL, or once in redis.sentinel_username and redis.sentinel_password",
    ],
    [
      'a URL password that differs from redis.password',
      `${cluster(`redis://:${PW}@n1:7000`)}  password: another\n`,
      "inline.yaml:8:9: redis.cluster.nodes.0: this URL's credentials differ from redis.password: give them in one place (the URLs, or the keys)",
    ],
    [
      'a URL user that differs from redis.sentinel_username',
      `${sentinels(`redis://a:${PW}@s1:26379`)}  sentinel_username: b\n`,
      "inline.yaml:8:7: redis.sentinels.0: this URL's credentials differ from redis.sentinel_username: give them in one place (the URLs, or the keys)",
    ],
    [
      'a number',
      'redis:\n  cluster:\n    nodes: [ 7000 ]\n',
      'inline.yaml:7:14: redis.cluster.nodes.0: expected host:port, redis://[user:password@]host:port or rediss://... (TLS), e.g. 10.0.0.5:26379',
    ],
  ])('refuses %s', (_what, yaml, message) => {
    const found = problems(yaml);
    expect(found.find((line) => line.startsWith(message)) ?? found.join('\n')).toMatch(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    // The password is never shown, whatever the problem.
    expect(found.join('\n')).not.toContain(PW);
  });
});

describe('what validate says about URL credentials', () => {
  it('names whether a password is set and for which user, never the password', () => {
    const clusterLines = describeRedisConfig(
      parse(cluster(`rediss://app:${PW}@n1:7000`, 'n2:7001')).redis,
    ).join('\n');
    expect(clusterLines).toContain('Redis Cluster, cluster via n1:7000, n2:7001');
    expect(clusterLines).toContain('password set (user app), TLS on');
    expect(clusterLines).not.toContain(PW);

    const sentinelLines = describeRedisConfig(
      parse(`${sentinels(`redis://:${PW}@s1:26379`)}  password: data-${PW}\n`).redis,
    ).join('\n');
    expect(sentinelLines).toContain(
      'via sentinels s1:26379, db 0, password set, sentinels: password set, TLS off',
    );
    expect(sentinelLines).not.toContain(PW);
  });
});
