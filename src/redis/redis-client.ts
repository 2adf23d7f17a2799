import type { Cluster, Redis } from 'ioredis';

/** A connection to one Redis (single or found through Sentinel) or a Redis Cluster client. */
export type RedisClient = Redis | Cluster;
