import { z } from 'zod';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';

/**
 * The audit of the operator API: every change made through it (a retry, a purge, a timer cancelled
 * or fired, a quarantined body replayed, a forget), who made it (the admin, or a console link by
 * its id: never the token), when, for which business, and the ids it touched: dead-letter,
 * timer and quarantine ids, which hash or number what they name. No customer text and no
 * conversation id: a forget is told by its counts, so the audit holds nothing a later forget
 * would have to erase. A list, newest first, bounded by count and by age.
 */
export const AUDIT_MAX_ENTRIES = 10_000;
export const AUDIT_TTL_SECONDS = 90 * 86_400;

export const AuditEntrySchema = z.object({
  at: z.iso.datetime().describe('When the change was made (ISO 8601).'),
  who: z
    .object({ kind: z.enum(['admin', 'link']), id: z.string().nullable() })
    .describe('The admin, or a console link by its id (`console link revoke <id>`).'),
  action: z.string().describe('e.g. dead-letters.retry, timers.cancel, forget.'),
  business: z.string().nullable(),
  ids: z.array(z.string()).describe('The dead letters, timers or quarantine entries it touched.'),
  outcome: z.string().describe('What came of it, in a few words.'),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

export async function appendAudit(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'apiAudit'>,
  entry: AuditEntry,
): Promise<void> {
  await redis
    .multi()
    .lpush(keys.apiAudit, JSON.stringify(entry))
    .ltrim(keys.apiAudit, 0, AUDIT_MAX_ENTRIES - 1)
    .expire(keys.apiAudit, AUDIT_TTL_SECONDS)
    .exec();
}

/** The newest entries first, those of `business` only when given, at most `limit`. */
export async function readAudit(
  redis: RedisClient,
  keys: Pick<BridgeKeys, 'apiAudit'>,
  options: { business?: string; limit: number },
): Promise<AuditEntry[]> {
  const raws = await redis.lrange(keys.apiAudit, 0, AUDIT_MAX_ENTRIES - 1);
  const out: AuditEntry[] = [];
  for (const raw of raws) {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      continue;
    }
    const parsed = AuditEntrySchema.safeParse(value);
    if (!parsed.success) continue;
    if (options.business !== undefined && parsed.data.business !== options.business) continue;
    out.push(parsed.data);
    if (out.length >= options.limit) break;
  }
  return out;
}
