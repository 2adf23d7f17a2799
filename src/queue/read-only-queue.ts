import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-client.js';

/**
 * A BullMQ queue to read from (listings, `reshard --check`): BullMQ's Queue writes its
 * `<queue>:meta` hash on creation, so a command that only looks would leave keys behind on a
 * Redis it was pointed at. `skipMetasUpdate` leaves that to the bridge's own
 * queues; reading jobs, counts and workers does not need it.
 */
export function readOnlyQueue(name: string, connection: RedisClient, prefix: string): Queue {
  return new Queue(name, { connection, prefix, skipMetasUpdate: true });
}
