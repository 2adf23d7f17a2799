/** Where a node listens (Sentinel or Cluster start-up node). */
export interface RedisEndpoint {
  host: string;
  port: number;
}

/**
 * Which Redis the bridge uses, as the config says (`redis.url`, `redis.sentinels` + `redis.name`,
 * or `redis.cluster.nodes`). Every connection of every part (receiver, workers, timers, CLI
 * commands) is made from this by createRedisClient, so they all reach the same data.
 */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | {
      kind: 'sentinel';
      sentinels: readonly RedisEndpoint[];
      /** The monitored primary's name (`sentinel monitor <name> ...`). */
      name: string;
      /** The data nodes' ACL user and password (`requirepass`/`masterauth`). */
      username?: string;
      password?: string;
      /** The sentinels' own credentials, when they have any. */
      sentinelUsername?: string;
      sentinelPassword?: string;
      /** TLS to the data nodes and the sentinels. */
      tls: boolean;
      db: number;
    }
  | {
      kind: 'cluster';
      nodes: readonly RedisEndpoint[];
      username?: string;
      password?: string;
      tls: boolean;
    };
