import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisClient } from '../../../src/redis/redis-connection.js';

// Issue 29, item 3: the TLS and credentials of a topology (from URLs or keys) reach every
// connection ioredis makes: each cluster node, the sentinels and the primary they name.
describe('createRedisClient options', () => {
  it('a TLS Sentinel topology: TLS to the sentinels and to the primary, each with its own password', () => {
    const client = createRedisClient(
      {
        kind: 'sentinel',
        sentinels: [{ host: 's1', port: 26379 }],
        name: 'mymaster',
        password: 'data-pw',
        sentinelUsername: 'sen',
        sentinelPassword: 'sen-pw',
        tls: true,
        db: 0,
      },
      { lazyConnect: true },
    );
    try {
      expect(client).toBeInstanceOf(Redis);
      expect((client as Redis).options).toMatchObject({
        tls: {},
        enableTLSForSentinelMode: true,
        sentinelTLS: {},
        password: 'data-pw',
        sentinelUsername: 'sen',
        sentinelPassword: 'sen-pw',
      });
    } finally {
      client.disconnect();
    }
  });

  it('a plain Sentinel topology: no TLS anywhere', () => {
    const client = createRedisClient(
      { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], name: 'm', tls: false, db: 0 },
      { lazyConnect: true },
    ) as Redis;
    try {
      expect(client.options.tls).toBeUndefined();
      expect(client.options.sentinelTLS).toBeUndefined();
    } finally {
      client.disconnect();
    }
  });

  it('a cluster topology: the user, password and TLS on every node connection', () => {
    const client = createRedisClient(
      { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }], username: 'app', password: 'pw', tls: true },
      { lazyConnect: true },
    );
    try {
      expect(client).toBeInstanceOf(Cluster);
      expect((client as Cluster).options.redisOptions).toMatchObject({
        username: 'app',
        password: 'pw',
        tls: {},
      });
    } finally {
      client.disconnect();
    }
  });
});
