import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { type DeadLetter, listDeadLetters } from '../worker/failures/dead-letters.js';
import { ApiError } from './api-error.js';
import { instantOf, timeSchema } from './api-schemas.js';

/** Every dead letter a filter looks through at most (retention.dead_letters bounds them anyway). */
export const MAX_SCANNED = 10_000;

export const DeadLetterFilterSchema = z.object({
  rule: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('A rule one of whose actions is in the dead letter (or, for a timer, that set it).'),
  action: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('An action id of the plan, `rule#index` (e.g. escalate#0), that the dead letter holds.'),
  error: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe(
      'The error kind: the code the dead letter was stored with (UNRECOVERABLE, UNEXPECTED, NOT_FOUND...).',
    ),
  queue: z.enum(['events', 'timers']).optional(),
  since: timeSchema.optional().describe('Failed at or after (an instant, or a duration before now: 24h).'),
  until: timeSchema.optional().describe('Failed before (an instant, or a duration before now).'),
});
export type DeadLetterFilter = z.infer<typeof DeadLetterFilterSchema>;

function rulesOf(entry: DeadLetter): string[] {
  const rules = entry.actions.map((a) => a.id.slice(0, Math.max(0, a.id.lastIndexOf('#'))) || a.id);
  const data = entry.data as { rule?: unknown } | null;
  if (entry.queue === 'timers' && typeof data?.rule === 'string') rules.push(data.rule);
  return rules;
}

export function matchesFilter(entry: DeadLetter, filter: DeadLetterFilter, now: number): boolean {
  const failedAt = Date.parse(entry.failedAt);
  if (filter.queue !== undefined && entry.queue !== filter.queue) return false;
  if (filter.error !== undefined && entry.code !== filter.error) return false;
  if (filter.rule !== undefined && !rulesOf(entry).includes(filter.rule)) return false;
  if (filter.action !== undefined && !entry.actions.some((a) => a.id === filter.action)) return false;
  if (filter.since !== undefined && failedAt < instantOf(filter.since, now)) return false;
  if (filter.until !== undefined && failedAt >= instantOf(filter.until, now)) return false;
  return true;
}

/** The dead letters of a business a filter selects, newest first. */
export async function selectDeadLetters(
  redis: RedisClient,
  keys: BridgeKeys,
  filter: DeadLetterFilter,
  now: number,
): Promise<DeadLetter[]> {
  const all = await listDeadLetters(redis, keys, { limit: MAX_SCANNED });
  return all.filter((entry) => matchesFilter(entry, filter, now));
}

/** A set of dead letters as a preview names it: its business and ids, order aside. */
export function fingerprintOf(business: string, ids: readonly string[]): string {
  return createHash('sha256')
    .update(`${business}\n${[...ids].sort().join('\n')}`)
    .digest('hex')
    .slice(0, 32);
}

/** How long a preview's set is kept for the change that follows it. */
export const PREVIEW_TTL_SECONDS = 30 * 60;

export async function keepPreviewSet(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'apiPreview'>,
  fingerprint: string,
  ids: readonly string[],
): Promise<void> {
  await redis.set(keys.apiPreview(fingerprint), JSON.stringify([...ids].sort()), 'EX', PREVIEW_TTL_SECONDS);
}

/**
 * The previewed set a change must find again: refused (409) when the selection now holds other
 * dead letters than the preview did, with the difference, or when the preview is unknown.
 */
export async function checkPreviewedSet(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'apiPreview'>,
  fingerprint: string,
  current: readonly string[],
  verb: string,
): Promise<void> {
  // Taken, not read: one preview makes one change, so a request sent twice does nothing the second time.
  const raw = await redis.getdel(keys.apiPreview(fingerprint));
  if (raw === null) {
    throw new ApiError(
      409,
      'PREVIEW_UNKNOWN',
      `no preview with fingerprint ${fingerprint} (previews are kept ${PREVIEW_TTL_SECONDS / 60} minutes)`,
      `send the same request with "preview": true first, then ${verb} with the fingerprint it answers`,
    );
  }
  const previewed = z.array(z.string()).parse(JSON.parse(raw));
  const before = new Set(previewed);
  const now = new Set(current);
  const diff = {
    added: [...now].filter((id) => !before.has(id)).sort(),
    removed: previewed.filter((id) => !now.has(id)),
  };
  if (diff.added.length > 0 || diff.removed.length > 0) {
    throw new ApiError(
      409,
      'SET_CHANGED',
      `the dead letters selected changed since the preview: ${diff.added.length} new, ${diff.removed.length} gone (retried, purged or expired); nothing was done`,
      `preview again and check the new set, then ${verb} with its fingerprint`,
      { details: { added: diff.added, removed: diff.removed } },
    );
  }
}
