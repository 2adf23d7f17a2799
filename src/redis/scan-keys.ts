import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client.js';

/** Every primary's connection (one for a single Redis or a Sentinel setup's primary), for SCAN and INFO. */
export function primaryConnections(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Every key matching `match` (a SCAN glob), on every primary of a cluster; each key once. */
export async function scanKeys(redis: RedisClient, match: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of primaryConnections(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return [...new Set(found)];
}

/** SCAN's MATCH treats `{`, `}`? no; but `[`, `]`, `*`, `?` and `\` are special: escape them. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
