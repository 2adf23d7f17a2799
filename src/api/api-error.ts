import type { Response } from 'express';
import { z } from 'zod';
import { ConvoBridgeError } from '../base/errors.js';

/**
 * An answer of the operator API that is not a success: an HTTP status, a stable code, what went
 * wrong and where (`message`), and how to fix it (`hint`). Every refusal of the API, the guard's
 * 401 and 429 included, has this one shape.
 */
export class ApiError extends ConvoBridgeError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly hint: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { code, ...(options.cause === undefined ? {} : { cause: options.cause }) });
    this.details = options.details;
  }
  readonly details: Record<string, unknown> | undefined;
}

export const ApiErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().describe('Stable and machine-readable, e.g. NOT_FOUND, FORBIDDEN, SET_CHANGED.'),
      message: z.string().describe('What went wrong, and where.'),
      hint: z.string().describe('How to fix it.'),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .describe('Every answer that is not a success.');
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;

export function sendApiError(res: Response, status: number, body: ApiErrorBody['error']): void {
  res.status(status).json({ error: body });
}

/**
 * The one answer for a business the caller may not see and for one that does not exist: the same
 * status, code and words, so that a link's holder cannot learn which other businesses a bridge has.
 */
export function businessNotFound(business: string): ApiError {
  return new ApiError(
    404,
    'NOT_FOUND',
    `no business ${JSON.stringify(business)} here`,
    'GET /api/v1/businesses lists the businesses you may see',
  );
}
