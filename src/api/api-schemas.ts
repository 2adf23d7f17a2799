import { z } from 'zod';
import { parseDuration } from '../base/duration.js';
import { BusinessIdSchema } from '../events/business-id.js';

/** `{business}` of a path: a business id (`default` for a config without `businesses:`). */
export const BusinessParamsSchema = z.object({
  business: BusinessIdSchema.describe('A business id; `default` for a config without `businesses:`.'),
});

/** `limit` of a list: 1 to 500, 50 unless given. */
export const limitSchema = (max = 500, fallback = 50) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`At most this many (1 to ${max}; default ${fallback}).`);

/**
 * A point in time as a query gives it: an ISO 8601 instant with a zone, or a duration before now
 * (`24h`, `7d`); read as milliseconds since the epoch against the request's clock.
 */
export const timeSchema = z
  .string()
  .trim()
  .refine(
    (text) => parseDuration(text) !== undefined || z.iso.datetime({ offset: true }).safeParse(text).success,
    {
      error:
        'write an ISO 8601 instant with a zone (2026-11-28T08:00:00Z) or a duration before now (30m, 24h, 7d)',
    },
  )
  .describe('An ISO 8601 instant with a zone, or a duration before now such as 24h or 7d.');

/** The instant of a timeSchema text, in ms since the epoch. */
export function instantOf(text: string, now: number): number {
  const ms = parseDuration(text);
  return ms === undefined ? Date.parse(text) : now - ms;
}

/** A change that was made, or in a preview would be: how many, and of which ids. */
export const ChangeCountSchema = z.object({ count: z.number().int().nonnegative() });
