import type { Logger } from 'pino';
import type { RedisClient } from '../../redis/redis-client.js';
import { createRedisClient, type RedisTopology } from '../../redis/redis-connection.js';

/**
 * The worker's Redis connections: one for the processors' commands, one its queues share, and one
 * of its own for each BullMQ worker (a worker blocks on Redis while it waits for jobs).
 * Workers need maxRetriesPerRequest: null (BullMQ production guide): they block on Redis and must
 * ride out Redis restarts instead of failing commands.
 */
export class WorkerConnections {
  /** The processors' commands (order gate, ledger, facts, timers, dead letters). */
  readonly commands: RedisClient;
  /** Shared by every shard's `events` and `timers` queues. */
  readonly queues: RedisClient;
  private readonly perWorker: RedisClient[] = [];

  constructor(
    private readonly topology: RedisTopology,
    log: Logger,
  ) {
    // Auto-pipelining batches the many small commands of concurrent jobs into fewer writes.
    this.commands = createRedisClient(topology, {
      maxRetriesPerRequest: null,
      enableAutoPipelining: true,
      connectionName: 'convo-bridge:worker-commands',
    });
    this.commands.on('error', (error) =>
      log.warn({ err: error.message }, 'redis (worker commands) connection error'),
    );
    this.queues = this.connect('worker-queues');
    this.queues.on('error', () => {});
  }

  /** A connection of its own for one BullMQ worker (`name`: events or timers, and the shard). */
  forWorker(name: string): RedisClient {
    const connection = this.connect(`worker-${name}`);
    connection.on('error', () => {});
    this.perWorker.push(connection);
    return connection;
  }

  /** Every connection opened so far (closed last, once the workers and queues are). */
  all(): RedisClient[] {
    return [this.commands, this.queues, ...this.perWorker];
  }

  private connect(name: string): RedisClient {
    return createRedisClient(this.topology, {
      maxRetriesPerRequest: null,
      connectionName: `convo-bridge:${name}`,
    });
  }
}
