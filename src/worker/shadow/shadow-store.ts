import { z } from 'zod';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';
import { globEscape, scanKeys } from '../../redis/scan-keys.js';
import type { RuleDifference } from './compare-plans.js';

/**
 * Where shadow rules keep what they found, under the global prefix of the business
 * (queue/redis-keys.ts): three hashes, bounded by construction.
 * - `shadowExamples`: per rule a ring of its last `examples` differences, `<rule>|<slot>` -> JSON.
 * - `shadowTotals`: per rule its differences since the store began (the ring's position).
 * - `shadowCounts(hour)`: one hash per hour of events: `e` events evaluated, `x` events that
 *   differed, and per rule `m|` events it matched on either side, `a|` in the active plan, `c|` in
 *   the candidate's, `d|` events on which it differed. Expires `max_age` after its hour.
 * A difference is written when it is found, in one script call (a ring slot, the totals and the
 * hour's counts); the counts of events whose plans agree are kept in memory and written once per
 * flush period (shadow-observer.ts), so that an event whose plans agree costs no Redis command.
 */

const MS_PER_HOUR = 3_600_000;

/** The hour an instant falls in, as the counts' keys number it. */
export function hourOf(ms: number): number {
  return Math.floor(ms / MS_PER_HOUR);
}

/** A kept rendered action is cut to this many characters (a long reply text stays recognisable). */
const MAX_ACTION_CHARS = 300;

export const ShadowExampleSchema = z.object({
  v: z.literal(1),
  at: z.iso.datetime({ offset: true }),
  rule: z.string(),
  conversationId: z.string().nullable(),
  eventKey: z.string(),
  kind: z.string(),
  active: z.object({ matched: z.boolean(), actions: z.array(z.string()) }),
  candidate: z.object({ matched: z.boolean(), actions: z.array(z.string()) }),
});
export type ShadowExample = z.output<typeof ShadowExampleSchema>;

/**
 * KEYS: examples, totals, the hour's counts. ARGV: slots per rule, TTL of the examples and totals
 * (s), TTL of the hour's counts (s), then per differing rule its name and its example's JSON.
 */
const DIFFERENCE_LUA = `
local slots = tonumber(ARGV[1])
for i = 4, #ARGV, 2 do
  local rule = ARGV[i]
  local n = redis.call('HINCRBY', KEYS[2], rule, 1)
  redis.call('HSET', KEYS[1], rule .. '|' .. (n % slots), ARGV[i + 1])
  redis.call('HINCRBY', KEYS[3], 'd|' .. rule, 1)
end
redis.call('HINCRBY', KEYS[3], 'x', 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return 1
`;
const differenceScript = defineRedisScript<number>('shadow-difference', 3, DIFFERENCE_LUA);

/** KEYS: the hour's counts. ARGV: its TTL (s), then field and increment pairs. */
const COUNTS_LUA = `
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
`;
const countsScript = defineRedisScript<number>('shadow-counts', 1, COUNTS_LUA);

export interface ShadowLimits {
  /** Differences kept per rule (shadow.examples). */
  examples: number;
  /** shadow.max_age. */
  maxAgeMs: number;
}

/** The event a difference was found on. */
export interface DifferenceEvent {
  at: Date;
  conversationId: string | null;
  eventKey: string;
  kind: string;
}

/** Writes one event's differences (one script call). */
export function storeShadowDifferences(
  redis: RedisClient,
  keys: BridgeKeys,
  event: DifferenceEvent,
  differences: readonly RuleDifference[],
  limits: ShadowLimits,
): Promise<number> {
  const args: (string | number)[] = [
    Math.max(1, limits.examples),
    ttlSeconds(limits.maxAgeMs),
    ttlSeconds(limits.maxAgeMs + MS_PER_HOUR),
  ];
  for (const difference of differences) {
    const example: ShadowExample = {
      v: 1,
      at: event.at.toISOString(),
      rule: difference.rule,
      conversationId: event.conversationId,
      eventKey: event.eventKey,
      kind: event.kind,
      active: { matched: difference.active.matched, actions: difference.active.actions.map(cut) },
      candidate: { matched: difference.candidate.matched, actions: difference.candidate.actions.map(cut) },
    };
    args.push(difference.rule, JSON.stringify(example));
  }
  return differenceScript(
    redis,
    [keys.shadowExamples, keys.shadowTotals, keys.shadowCounts(hourOf(event.at.getTime()))],
    args,
  );
}

/** Adds counts to an hour's hash (one script call). */
export function storeShadowCounts(
  redis: RedisClient,
  keys: BridgeKeys,
  hour: number,
  counts: ReadonlyMap<string, number>,
  maxAgeMs: number,
): Promise<number> {
  const args: (string | number)[] = [ttlSeconds(maxAgeMs + MS_PER_HOUR)];
  for (const [field, count] of counts) args.push(field, count);
  return countsScript(redis, [keys.shadowCounts(hour)], args);
}

function ttlSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function cut(text: string): string {
  return text.length > MAX_ACTION_CHARS ? `${text.slice(0, MAX_ACTION_CHARS - 1)}…` : text;
}

/** The counts of the hours from `sinceMs` to `untilMs`, summed by field. */
export async function readShadowCounts(
  redis: RedisClient,
  keys: BridgeKeys,
  sinceMs: number,
  untilMs: number,
): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const hours: number[] = [];
  for (let hour = hourOf(sinceMs); hour <= hourOf(untilMs); hour++) hours.push(hour);
  for (let i = 0; i < hours.length; i += 500) {
    const pipeline = redis.pipeline();
    for (const hour of hours.slice(i, i + 500)) pipeline.hgetall(keys.shadowCounts(hour));
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      for (const [field, count] of Object.entries(value as Record<string, string>)) {
        sums.set(field, (sums.get(field) ?? 0) + Number(count));
      }
    }
  }
  return sums;
}

export interface ShadowExamples {
  /** Newest first. */
  examples: ShadowExample[];
  /** Entries that did not pass the schema (written by another version?), as `field: problem`. */
  problems: string[];
}

/** Every kept difference, validated (another bridge may have written them), newest first. */
export async function readShadowExamples(redis: RedisClient, keys: BridgeKeys): Promise<ShadowExamples> {
  const raw = await redis.hgetall(keys.shadowExamples);
  const examples: ShadowExample[] = [];
  const problems: string[] = [];
  for (const [field, value] of Object.entries(raw)) {
    let json: unknown;
    try {
      json = JSON.parse(value);
    } catch {
      problems.push(`${field}: not JSON`);
      continue;
    }
    const parsed = ShadowExampleSchema.safeParse(json);
    if (parsed.success) examples.push(parsed.data);
    else problems.push(`${field}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  examples.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  return { examples, problems };
}

/** Per rule, its differences since the store began. */
export async function readShadowTotals(redis: RedisClient, keys: BridgeKeys): Promise<Map<string, number>> {
  const raw = await redis.hgetall(keys.shadowTotals);
  return new Map(Object.entries(raw).map(([rule, count]) => [rule, Number(count)]));
}

/** Deletes every shadow key of these keys' business; returns how many keys went. */
export async function resetShadow(redis: RedisClient, keys: BridgeKeys): Promise<number> {
  const counts = await scanKeys(redis, `${globEscape(keys.shadowCounts(0).slice(0, -1))}*`);
  const all = [keys.shadowExamples, keys.shadowTotals, ...counts];
  let deleted = 0;
  // A DEL per key, pipelined (they share the business's hash tag, so one node takes them all).
  for (let i = 0; i < all.length; i += 500) {
    const pipeline = redis.pipeline();
    for (const key of all.slice(i, i + 500)) pipeline.del(key);
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      deleted += Number(value);
    }
  }
  return deleted;
}
