import { Cluster } from 'ioredis';
import { ConvoBridgeError, describeError } from '../base/errors.js';
import { CLUSTER_SLOTS } from '../redis/key-slot.js';
import type { RedisClient } from '../redis/redis-client.js';
import { primaryConnections } from '../redis/scan-keys.js';

/** A Redis node forget must reach is down, or a cluster's slots are not all served: nothing was erased. */
export class ForgetUnavailableError extends ConvoBridgeError {
  constructor(problem: string, cause?: unknown) {
    super(`${problem}, so nothing was erased; run forget again once every node answers`, {
      code: 'REDIS_UNAVAILABLE',
      cause,
    });
  }
}

/**
 * Every primary must answer, and on a cluster every slot must be served, before anything is
 * searched or erased: an erasure that reached some nodes and not others would report success while
 * data stays behind. Throws ForgetUnavailableError naming the node.
 */
export async function checkEveryNode(redis: RedisClient): Promise<void> {
  const nodes = primaryConnections(redis);
  if (redis instanceof Cluster) {
    const problem = clusterProblem(String(await nodes[0]?.cluster('NODES')));
    if (problem !== null) throw new ForgetUnavailableError(`the Redis Cluster is not whole: ${problem}`);
  }
  for (const node of nodes) {
    try {
      await node.ping();
    } catch (error) {
      throw new ForgetUnavailableError(
        `cannot reach Redis node ${node.options.host}:${node.options.port} (${describeError(error)})`,
        error,
      );
    }
  }
}

/** What keeps a cluster from being searched whole (CLUSTER NODES): a failing primary or unserved slots. */
export function clusterProblem(nodesText: string): string | null {
  let covered = 0;
  const failing: string[] = [];
  for (const line of nodesText.split('\n')) {
    const [, address = '', flags = '', , , , , link = '', ...slots] = line.trim().split(' ');
    if (!flags.split(',').includes('master')) continue;
    if (/fail/.test(flags) || link === 'disconnected') {
      failing.push(address.split('@')[0] ?? address);
      continue;
    }
    for (const range of slots) {
      if (range.startsWith('[')) continue; // a slot being migrated: counted at its owner
      const [low, high = low] = range.split('-').map(Number);
      if (low !== undefined && high !== undefined) covered += high - low + 1;
    }
  }
  if (failing.length > 0) return `primary ${failing.join(', ')} is down or unreachable`;
  if (covered < CLUSTER_SLOTS) return `${CLUSTER_SLOTS - covered} of ${CLUSTER_SLOTS} slots have no primary`;
  return null;
}
