import type { RedisClient } from '../../src/redis/redis-client.js';
import { primaryConnections } from '../../src/redis/scan-keys.js';

/**
 * Every key of a Redis (every primary of a cluster) with its whole value as text: strings, hashes,
 * lists, sets, sorted sets and streams. For tests that must show that nothing anywhere holds a
 * piece of data, not only the keys they expect it in.
 */
export async function everyKeyAndValue(redis: RedisClient): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for (const node of primaryConnections(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const value = await readValue(node, key);
        if (value !== null) all.set(key, value);
      }
    } while (cursor !== '0');
  }
  return all;
}

async function readValue(
  node: ReturnType<typeof primaryConnections>[number],
  key: string,
): Promise<string | null> {
  const type = await node.type(key);
  switch (type) {
    case 'string':
      return node.get(key);
    case 'hash':
      return JSON.stringify(await node.hgetall(key));
    case 'list':
      return JSON.stringify(await node.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify((await node.smembers(key)).sort());
    case 'zset':
      return JSON.stringify(await node.zrange(key, 0, -1, 'WITHSCORES'));
    case 'stream':
      return JSON.stringify(await node.xrange(key, '-', '+'));
    case 'none':
      return null; // expired between SCAN and the read
    default:
      return `<${type}>`;
  }
}

/** The keys whose name or value holds any of the needles, with the needles each holds. */
export function keysHolding(all: Map<string, string>, needles: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const [key, value] of all) {
    const held = needles.filter((needle) => key.includes(needle) || value.includes(needle));
    if (held.length > 0) found.set(key, held);
  }
  return found;
}
