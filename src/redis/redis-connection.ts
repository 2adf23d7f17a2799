import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisEndpoint, RedisTopology } from '../config/redis-topology.js';
import { databaseOfRedisUrl } from '../config/redis-url.js';
import { DatabaseGuardedRedis } from './database-guard.js';
import { keySlot } from './key-slot.js';
import { redisAddress } from './redis-address.js';
import type { RedisClient } from './redis-client.js';

export type { RedisClient, RedisEndpoint, RedisTopology };

/** The topology in words for logs and errors (never a password). */
export function describeTopology(topology: RedisTopology): string {
  const list = (nodes: readonly RedisEndpoint[]) => nodes.map((n) => `${n.host}:${n.port}`).join(', ');
  switch (topology.kind) {
    case 'single':
      return redisAddress(topology.url);
    case 'sentinel':
      return `primary "${topology.name}" via sentinels ${list(topology.sentinels)}`;
    case 'cluster':
      return `cluster via ${list(topology.nodes)}`;
  }
}

/** A topology for a plain URL (tests, tools, `--redis-url`). */
export function singleRedis(url: string): RedisTopology {
  return { kind: 'single', url };
}

/**
 * One connection (or, for a cluster, one client holding a connection per node) to the topology.
 * `options` are the role's ioredis settings (fail fast for the receiver, `maxRetriesPerRequest:
 * null` for workers, ...); for a cluster they apply to every node connection, and the ones that
 * are the cluster client's own (offline queue, auto-pipelining, retry strategy) are lifted to it.
 */
export function createRedisClient(topology: RedisTopology, options: RedisOptions = {}): RedisClient {
  switch (topology.kind) {
    case 'single':
      // A database other than 0 is SELECTed by ioredis; the guard stops the client when Redis
      // refuses it, instead of going on in database 0.
      return databaseOfRedisUrl(topology.url) === 0
        ? new Redis(topology.url, options)
        : new DatabaseGuardedRedis(
            { address: redisAddress(topology.url), kind: 'url' },
            topology.url,
            options,
          );
    case 'sentinel':
      return new DatabaseGuardedRedis(
        { address: describeTopology(topology), kind: 'sentinel' },
        {
          ...options,
          sentinels: topology.sentinels.map((n) => ({ host: n.host, port: n.port })),
          name: topology.name,
          db: topology.db,
          role: 'master',
          ...(topology.username === undefined ? {} : { username: topology.username }),
          ...(topology.password === undefined ? {} : { password: topology.password }),
          ...(topology.sentinelUsername === undefined ? {} : { sentinelUsername: topology.sentinelUsername }),
          ...(topology.sentinelPassword === undefined ? {} : { sentinelPassword: topology.sentinelPassword }),
          // `tls` + enableTLSForSentinelMode reach the primary over TLS; `sentinelTLS` the sentinels
          // (ioredis asks them on connections of their own, which `tls` alone leaves in plain text).
          ...(topology.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
          // No `failoverDetector`: in ioredis 5.11 a +switch-master that arrives while the client is
          // asking the sentinels for the primary leaves it in status `end`, never reconnecting (fault
          // row 7 caught a receiver answering 503 for good; compare redis/ioredis#1683). A killed
          // primary closes the connection anyway, and a demoted one answers writes with READONLY,
          // which makes the client ask the sentinels again (below). Writes that reach a primary cut
          // off from its replicas are never acknowledged: WAIT finds no replica (ingest-event.ts).
          reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
          // Retry sentinels quickly while none answers (the default waits up to 10 s).
          sentinelRetryStrategy: (times: number) => Math.min(times * 100, 1_000),
        },
      );
    case 'cluster': {
      const {
        enableOfflineQueue,
        enableAutoPipelining,
        retryStrategy,
        lazyConnect,
        connectionName,
        ...nodeOptions
      } = options;
      const clusterOptions: ClusterOptions = {
        redisOptions: {
          ...nodeOptions,
          ...(connectionName === undefined ? {} : { connectionName }),
          ...(topology.username === undefined ? {} : { username: topology.username }),
          ...(topology.password === undefined ? {} : { password: topology.password }),
          ...(topology.tls ? { tls: {} } : {}),
        },
        // Writes and reads go to primaries: a replica may lag behind what was just written.
        scaleReads: 'master',
        // While a failover promotes a replica the slots move; refresh and retry soon.
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 100,
        slotsRefreshTimeout: 2_000,
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
        ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
        ...(lazyConnect === undefined ? {} : { lazyConnect }),
        ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
      };
      return new Cluster(
        topology.nodes.map((n) => ({ host: n.host, port: n.port })),
        clusterOptions,
      );
    }
  }
}

/**
 * The connection that holds `key` (for a cluster: the connection to the primary serving its slot
 * now), e.g. to send WAIT after writes to that key. Undefined while a cluster does not know the
 * slot's owner (refreshing after a failover).
 */
export function connectionFor(client: RedisClient, key: string): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  const owner = client.slots[keySlot(key)]?.[0];
  if (owner === undefined) return undefined;
  return client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === owner);
}
