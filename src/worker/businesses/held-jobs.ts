import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import { tagOfJob } from '../../events/business-naming.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { PENDING_STATES } from '../pending-jobs.js';

/** The queues of one shard, as the held jobs are found and promoted in them. */
export interface HeldQueues {
  readonly events: Queue;
  readonly timers: Queue;
}

/** Events and timers kept for one naming that no business of the config holds. */
export interface HeldCount {
  events: number;
  timers: number;
}

/** Most jobs read per queue and shard by one count: past it the count says "at least". */
export const HELD_SCAN_LIMIT = 20_000;
const PAGE = 500;

/** Held jobs by naming tag, then by job (`<queue>|<queue name>|<job id>`): what each holds of that naming. */
type HeldByJob = Map<string, Map<string, HeldCount>>;

/**
 * The events and timers in the queues whose naming no business of `served` holds (by naming tag):
 * what a bridge of this config would hold. Read-only; bounded by HELD_SCAN_LIMIT jobs per queue,
 * state and shard (`complete` false past it). Used by `validate` and at the worker's start.
 */
export async function countHeldJobs(
  shards: readonly HeldQueues[],
  served: ReadonlySet<string>,
): Promise<{ held: Map<string, HeldCount>; complete: boolean }> {
  const { byJob, complete } = await scanHeldJobs(shards, served);
  return { held: totals(byJob), complete };
}

async function scanHeldJobs(
  shards: readonly HeldQueues[],
  served: ReadonlySet<string>,
): Promise<{ byJob: HeldByJob; complete: boolean }> {
  const byJob: HeldByJob = new Map();
  let complete = true;
  for (const shard of shards) {
    for (const queue of ['events', 'timers'] as const) {
      for (const state of PENDING_STATES) {
        let read = 0;
        for (let start = 0; start < HELD_SCAN_LIMIT; start += PAGE) {
          const jobs = await shard[queue].getJobs(state, start, start + PAGE - 1, true);
          read += jobs.length;
          for (const job of jobs) addJob(byJob, job, queue, (tag) => !served.has(tag));
          if (jobs.length < PAGE) break;
        }
        if (read >= HELD_SCAN_LIMIT) complete = false;
      }
    }
  }
  return { byJob, complete };
}

/**
 * Notes what a job holds of each naming `held` says is held. A job seen twice (it moved from
 * `active` to `delayed` while the lists were read) is counted once: its entry is set, not added to.
 */
function addJob(
  byJob: HeldByJob,
  job: Job,
  queue: 'events' | 'timers',
  held: (tag: string) => boolean,
): void {
  const key = jobKey(queue, job);
  const counts = new Map<string, HeldCount>();
  for (const tag of tagsOfJob(job, queue)) {
    if (!held(tag)) continue;
    const count = counts.get(tag) ?? { events: 0, timers: 0 };
    count[queue] += 1;
    counts.set(tag, count);
  }
  for (const [tag, count] of counts) {
    let jobs = byJob.get(tag);
    if (jobs === undefined) {
      jobs = new Map();
      byJob.set(tag, jobs);
    }
    jobs.set(key, count);
  }
}

function totals(byJob: HeldByJob): Map<string, HeldCount> {
  const out = new Map<string, HeldCount>();
  for (const [tag, jobs] of byJob) {
    const total = { events: 0, timers: 0 };
    for (const count of jobs.values()) {
      total.events += count.events;
      total.timers += count.timers;
    }
    out.set(tag, total);
  }
  return out;
}

/** A job as the held hash names it: `<queue>|<BullMQ's qualified queue name>|<job id>`. */
function jobKey(queue: 'events' | 'timers', job: Job): string {
  return `${queue}|${job.queueQualifiedName}|${job.id ?? ''}`;
}

/** The naming tags of a job's events (a batch: one per event) or of a timer. */
function tagsOfJob(job: Job | undefined, queue: 'events' | 'timers'): string[] {
  const data: unknown = job?.data;
  if (data === null || typeof data !== 'object') return [];
  if (queue === 'timers') return [tagOfJob((data as { business?: unknown }).business)];
  const events = (data as { events?: unknown }).events;
  if (!Array.isArray(events)) return [];
  return events.map((item: unknown) =>
    tagOfJob(
      item !== null && typeof item === 'object' ? (item as { business?: unknown }).business : undefined,
    ),
  );
}

/** In words: `12 events and 3 timers`. */
export function describeHeldCount(count: HeldCount): string {
  const parts = [];
  if (count.events > 0) parts.push(`${count.events} event${count.events === 1 ? '' : 's'}`);
  if (count.timers > 0) parts.push(`${count.timers} timer${count.timers === 1 ? '' : 's'}`);
  return parts.join(' and ');
}

/**
 * The jobs this bridge holds because no business of its config holds their naming: recorded in
 * Redis (`keys.heldJobs`, field `<queue>|<queue prefix>|<job id>`, value its naming tag), so that
 * whichever process serves the naming later promotes them at once instead of at their recheck;
 * counted for `/readyz` and the `convo_bridge_held` gauge.
 */
export class HeldJobs {
  /** Held now, by naming tag and job (set by `recount` and `hold`, emptied for a naming a business holds). */
  private byJob: HeldByJob = new Map();
  private complete = true;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: BridgeKeys,
    private readonly shards: readonly HeldQueues[],
    private readonly log: Logger,
  ) {}

  /** Records a job parked for a naming no business here holds. */
  async hold(tag: string, queue: 'events' | 'timers', job: Job): Promise<void> {
    await this.redis.hset(this.keys.heldJobs, jobKey(queue, job), tag);
    // Counted from its data: the scan at start may have missed it while it moved between lists.
    addJob(this.byJob, job, queue, (t) => t === tag);
  }

  /**
   * These namings are held by a business now: their recorded jobs are promoted (they run at once),
   * in the background; a failure is logged, and the jobs still come back at their recheck.
   */
  serve(tags: readonly string[]): void {
    for (const tag of tags) this.byJob.delete(tag);
    void this.promote(new Set(tags)).catch((error: unknown) =>
      this.log.warn(
        { err: String(error) },
        'could not promote the jobs held for a business now served; they run at their recheck',
      ),
    );
  }

  /** Counts what the queues hold for namings not in `served` (at start, after a reload). */
  async recount(served: ReadonlySet<string>): Promise<Map<string, HeldCount>> {
    const { byJob, complete } = await scanHeldJobs(this.shards, served);
    // Jobs held meanwhile (by `hold`) of namings still not served are kept.
    for (const [tag, jobs] of this.byJob) {
      if (served.has(tag)) continue;
      const found = byJob.get(tag) ?? new Map<string, HeldCount>();
      for (const [key, count] of jobs) if (!found.has(key)) found.set(key, count);
      byJob.set(tag, found);
    }
    this.byJob = byJob;
    this.complete = complete;
    return totals(byJob);
  }

  /** Held now, by naming tag; `complete` false when a queue was too long to read whole. */
  snapshot(): { held: ReadonlyMap<string, HeldCount>; complete: boolean } {
    return { held: totals(this.byJob), complete: this.complete };
  }

  private async promote(tags: ReadonlySet<string>): Promise<void> {
    const all = await this.redis.hgetall(this.keys.heldJobs);
    const byName = new Map<string, Queue>();
    for (const shard of this.shards) {
      byName.set(`events|${shard.events.qualifiedName}`, shard.events);
      byName.set(`timers|${shard.timers.qualifiedName}`, shard.timers);
    }
    for (const [field, tag] of Object.entries(all)) {
      if (!tags.has(tag)) continue;
      const cut = field.lastIndexOf('|');
      const queue = byName.get(field.slice(0, cut));
      const job = queue ? await queue.getJob(field.slice(cut + 1)) : undefined;
      // Not delayed any more (it ran, or was promoted by another process): nothing to do.
      await job?.promote().catch(() => undefined);
      await this.redis.hdel(this.keys.heldJobs, field);
    }
  }
}
