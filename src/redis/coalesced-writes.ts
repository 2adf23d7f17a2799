import type { ChainableCommander } from 'ioredis';
import { keySlot } from './key-slot.js';
import type { RedisClient } from './redis-client.js';

/** What one caller's commands answered, in the order it queued them (ioredis's pipeline results). */
export type PipelineResults = [error: Error | null, result: unknown][];

interface Batch {
  pipeline: ChainableCommander;
  /** Per caller: where its commands start in the pipeline, how many, and its promise's ends. */
  callers: {
    from: number;
    count: number;
    resolve: (r: PipelineResults) => void;
    reject: (e: unknown) => void;
  }[];
  size: number;
}

/**
 * Group commit for writes that must be durable before the caller goes on (the worker's `started`
 * entries): the writes queued in one turn of the event loop go out as ONE pipeline, so one socket
 * write (and one read of the replies) instead of one per caller. On this machine a loopback write
 * costs tens of microseconds of CPU, the worker's largest per-event cost after its HTTP calls, and
 * the runs of a batch reach their first write in the same turn.
 *
 * Each caller still waits for its own commands' replies and sees its own errors (a failed command
 * fails only its caller; a lost connection fails every caller of the pipeline, as before). The
 * batch is sent at `setImmediate`, after the I/O callbacks of the current turn, so a lone write
 * waits for no timer. Unlike ioredis's auto-pipelining, batches do not wait for the one before to
 * be answered. On a cluster, writes are grouped by hash slot (a pipeline must stay on one node;
 * the callers' keys share their shard's tag).
 */
export class CoalescedWrites {
  private readonly batches = new Map<number, Batch>();
  private scheduled = false;
  private readonly isCluster: boolean;

  constructor(private readonly redis: RedisClient) {
    this.isCluster = 'isCluster' in redis && redis.isCluster === true;
  }

  /**
   * Queues the commands `build` adds (`count` of them, all on keys of `slotKey`'s slot) for the
   * next batch; resolves with their results once Redis has answered the batch.
   */
  exec(slotKey: string, build: (pipeline: ChainableCommander) => number): Promise<PipelineResults> {
    const group = this.isCluster ? keySlot(slotKey) : 0;
    let batch = this.batches.get(group);
    if (!batch) {
      batch = { pipeline: this.redis.pipeline(), callers: [], size: 0 };
      this.batches.set(group, batch);
    }
    const from = batch.size;
    const count = build(batch.pipeline);
    batch.size += count;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const target = batch;
    return new Promise((resolve, reject) => {
      target.callers.push({ from, count, resolve, reject });
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const batch of batches) {
      batch.pipeline.exec().then(
        (results) => {
          for (const caller of batch.callers) {
            caller.resolve((results ?? []).slice(caller.from, caller.from + caller.count) as PipelineResults);
          }
        },
        (error: unknown) => {
          for (const caller of batch.callers) caller.reject(error);
        },
      );
    }
  }
}

const perClient = new WeakMap<RedisClient, CoalescedWrites>();

/** The coalescer of a connection (one per client, so every run on it shares the batches). */
export function coalescedWrites(redis: RedisClient): CoalescedWrites {
  let writes = perClient.get(redis);
  if (!writes) {
    writes = new CoalescedWrites(redis);
    perClient.set(redis, writes);
  }
  return writes;
}
