import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../base/with-deadline.js';
import type { BusinessNaming } from '../events/business-naming.js';
import type { KeyLayout } from '../queue/key-layout.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { HeldCount } from '../worker/businesses/held-jobs.js';

export interface QueueGaugeDeps {
  /** Each shard's queues (none in `serve`, which runs no worker). */
  shards: readonly { events: Queue; timers: Queue }[];
  /** The control connection. */
  redis: RedisClient;
  layout: KeyLayout;
  /**
   * The businesses served now (they change on reload): the dead-letter and quarantine gauges are
   * per business, read from the sets of its naming (docs/businesses.md).
   */
  businesses: () => readonly { readonly id: string; readonly naming: BusinessNaming }[];
  /** What the worker holds for businesses the config does not have, by naming tag, labelled as (none in `serve`). */
  held?: () => { held: ReadonlyMap<string, HeldCount> };
  /** The `business` label of a held naming tag. */
  heldLabel?: (tag: string) => string;
  /** True while the outage reporter says Redis is away: no reads are queued behind the reconnect. */
  isDown: () => boolean;
  now?: () => number;
  /** Bound on each read at scrape time, so that /metrics answers while Redis does not. */
  deadlineMs?: number;
}

/**
 * Queue depths, the age of the oldest waiting event, dead letters and the quarantine, read from
 * Redis when Prometheus scrapes (never cached stale, never counted per event). A read that fails
 * or times out leaves the gauge without a sample for that scrape rather than a made-up 0, which
 * a "dead letters growing" alert would take for a drop and then a rise.
 */
export function registerQueueGauges(registry: Registry, deps: QueueGaugeDeps): void {
  const { shards, redis, isDown } = deps;
  const deadlineMs = deps.deadlineMs ?? 2_000;
  const now = deps.now ?? Date.now;
  /** Reads Redis within the deadline; undefined when Redis is away or does not answer in time. */
  const read = async <T>(what: string, reading: () => Promise<T>): Promise<T | undefined> => {
    if (isDown() || redis.status !== 'ready') return undefined;
    return withDeadline(reading(), deadlineMs, what).catch(() => undefined);
  };
  new Gauge({
    name: 'convo_bridge_queue_jobs',
    help: 'Jobs in each queue by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const totals = await read('queue job counts', () => jobCounts(shards));
      this.reset();
      if (totals === undefined) return;
      for (const [name, counts] of totals) {
        for (const [state, count] of Object.entries(counts)) this.set({ queue: name, state }, count);
      }
    },
  });
  new Gauge({
    name: 'convo_bridge_oldest_waiting_event_seconds',
    help: 'How long the event job next in line has waited since the receiver stored it (0 when none waits). Retries and paused businesses wait as delayed jobs and are not counted.',
    registers: [registry],
    async collect() {
      const oldest =
        shards.length === 0 ? undefined : await read('the oldest waiting job', () => oldestWaiting(shards));
      if (oldest === undefined) this.remove({});
      else this.set(oldest === null ? 0 : Math.max(0, (now() - oldest) / 1000));
    },
  });
  const { held, heldLabel } = deps;
  if (held && heldLabel) {
    new Gauge({
      name: 'convo_bridge_held',
      help: 'Events and timers kept in Redis for a business the config does not have (they run once it has it again; see /readyz).',
      labelNames: ['business', 'queue'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [tag, count] of held().held) {
          this.set({ business: heldLabel(tag), queue: 'events' }, count.events);
          this.set({ business: heldLabel(tag), queue: 'timers' }, count.timers);
        }
      },
    });
  }
  registerSetGauge(registry, deps, read, {
    name: 'convo_bridge_dead_letters',
    help: 'Entries in the dead-letter set (convo-bridge dlq list).',
    key: (keys) => keys.deadIndex,
  });
  registerSetGauge(registry, deps, read, {
    name: 'convo_bridge_quarantined',
    help: 'Webhook bodies in the quarantine (convo-bridge quarantine list).',
    key: (keys) => keys.quarantine,
  });
}

/** Job counts by queue name and state, summed over the shards (same name, one per shard): the label stays events/timers. */
async function jobCounts(shards: QueueGaugeDeps['shards']): Promise<Map<string, Record<string, number>>> {
  const totals = new Map<string, Record<string, number>>();
  const queues = shards.flatMap((shard) => [shard.events, shard.timers]);
  const counts = await Promise.all(
    queues.map((queue) =>
      queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'),
    ),
  );
  queues.forEach((queue, index) => {
    const total = totals.get(queue.name) ?? {};
    for (const [state, count] of Object.entries(counts[index] ?? {})) {
      total[state] = (total[state] ?? 0) + count;
    }
    totals.set(queue.name, total);
  });
  return totals;
}

/**
 * When the event job next in line was stored (its BullMQ timestamp), over every shard; null when
 * none waits. The job next in line is the tail of BullMQ's wait list (`getWaiting(0, 0)`): one
 * job read per shard per scrape, whatever the backlog.
 */
async function oldestWaiting(shards: QueueGaugeDeps['shards']): Promise<number | null> {
  const heads = await Promise.all(shards.map((shard) => shard.events.getWaiting(0, 0)));
  const stamps = heads.flatMap((jobs) => jobs.map((job) => job.timestamp));
  return stamps.length === 0 ? null : Math.min(...stamps);
}

/** A gauge of one sorted set's size: of the one business, or of each business served (labelled). */
function registerSetGauge(
  registry: Registry,
  deps: QueueGaugeDeps,
  read: <T>(what: string, reading: () => Promise<T>) => Promise<T | undefined>,
  gauge: { name: string; help: string; key: (keys: BridgeKeys) => string },
): void {
  const { redis, layout, businesses } = deps;
  new Gauge({
    name: gauge.name,
    help: gauge.help,
    labelNames: ['business'],
    registers: [registry],
    async collect() {
      const served = businesses();
      const sizes = await read(gauge.name, () =>
        Promise.all(served.map(({ naming }) => redis.zcard(gauge.key(layout.forNaming(naming).global)))),
      );
      // A business removed by a reload loses its series here.
      this.reset();
      if (sizes === undefined) return;
      for (const [index, { id }] of served.entries()) this.set({ business: id }, sizes[index] ?? 0);
    },
  });
}
