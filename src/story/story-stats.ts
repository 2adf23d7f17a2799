import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { FIRST_REPLY_BUCKETS_MS, STATS_FIELDS } from './build-story-write.js';
import { HOUR_MS } from './story-lua.js';
import type { Stats, StatsHour } from './story-schema.js';

type Counts = Omit<StatsHour, 'hour'>;

const zero = (): Counts => ({
  events: 0,
  actions: {},
  escalations: 0,
  repliesBlocked: 0,
  deadLetters: 0,
  shadowDifferences: 0,
});

/** Adds one bucket hash (as HGETALL returns it) to the counts and to the first-reply histogram. */
function addBucket(counts: Counts, histogram: number[], bucket: Record<string, string>): void {
  for (const [field, value] of Object.entries(bucket)) {
    const n = Number(value);
    if (!Number.isFinite(n)) continue;
    if (field === STATS_FIELDS.events) counts.events += n;
    else if (field === STATS_FIELDS.escalations) counts.escalations += n;
    else if (field === STATS_FIELDS.repliesBlocked) counts.repliesBlocked += n;
    else if (field === STATS_FIELDS.deadLetters) counts.deadLetters += n;
    else if (field === STATS_FIELDS.shadowDifferences) counts.shadowDifferences += n;
    else if (field.startsWith(STATS_FIELDS.action)) {
      const type = field.slice(STATS_FIELDS.action.length);
      counts.actions[type] = (counts.actions[type] ?? 0) + n;
    } else if (field.startsWith(STATS_FIELDS.firstReply)) {
      const index = Number(field.slice(STATS_FIELDS.firstReply.length));
      if (Number.isInteger(index) && index >= 0 && index <= FIRST_REPLY_BUCKETS_MS.length) {
        histogram[index] = (histogram[index] ?? 0) + n;
      }
    }
  }
}

function addCounts(total: Counts, counts: Counts): void {
  total.events += counts.events;
  total.escalations += counts.escalations;
  total.repliesBlocked += counts.repliesBlocked;
  total.deadLetters += counts.deadLetters;
  total.shadowDifferences += counts.shadowDifferences;
  for (const [type, n] of Object.entries(counts.actions))
    total.actions[type] = (total.actions[type] ?? 0) + n;
}

/** The upper bound of the bucket where the q-quantile falls (null without data; the open bucket: its lower bound). */
export function histogramQuantile(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((sum, n) => sum + (n ?? 0), 0);
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank)
      return FIRST_REPLY_BUCKETS_MS[i] ?? FIRST_REPLY_BUCKETS_MS[FIRST_REPLY_BUCKETS_MS.length - 1] ?? null;
  }
  return null;
}

/** The stats of a business since then: every shard's hourly buckets summed (one pipeline per shard: one slot each). */
export async function readStats(
  redis: RedisClient,
  shards: readonly BridgeKeys[],
  business: string,
  sinceMs: number,
  now: number,
): Promise<Stats> {
  const first = Math.floor(sinceMs / HOUR_MS);
  const last = Math.floor(now / HOUR_MS);
  const hours: number[] = [];
  for (let h = first; h <= last; h++) hours.push(h);
  const perHour = hours.map(zero);
  const histogram: number[] = [];
  const perShard = await Promise.all(
    shards.map(async (keys) => {
      const pipeline = redis.pipeline();
      for (const hour of hours) pipeline.hgetall(keys.storyStats(hour));
      return (await pipeline.exec()) ?? [];
    }),
  );
  for (const results of perShard) {
    results.forEach(([error, bucket], i) => {
      if (error) throw error;
      addBucket(perHour[i] as Counts, histogram, (bucket ?? {}) as Record<string, string>);
    });
  }
  const total = zero();
  for (const counts of perHour) addCounts(total, counts);
  const replies = histogram.reduce((sum, n) => sum + (n ?? 0), 0);
  return {
    business,
    since: new Date(sinceMs).toISOString(),
    until: new Date(now).toISOString(),
    ...total,
    escalationRate: total.events === 0 ? null : total.escalations / total.events,
    firstAgentReply: {
      count: replies,
      p50Ms: histogramQuantile(histogram, 0.5),
      p90Ms: histogramQuantile(histogram, 0.9),
    },
    hours: hours.map((hour, i) => ({
      hour: new Date(hour * HOUR_MS).toISOString(),
      ...(perHour[i] as Counts),
    })),
  };
}
