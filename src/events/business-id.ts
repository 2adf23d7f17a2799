import { z } from 'zod';

/**
 * A business's id: it names the business in Redis keys, job data, logs, metrics and the
 * CLI's `--business`, so it is short and plain: lower-case letters, digits and inner hyphens.
 */
export const BUSINESS_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export const BusinessIdSchema = z
  .string()
  .regex(BUSINESS_ID_PATTERN, { error: 'a business id uses a-z, 0-9 and inner hyphens, 1 to 40 characters' });
