import { ConvoBridgeError } from '../base/errors.js';
import type { PlatformOperation } from './operations.js';

/**
 * Every way a platform call can fail, as one stable `code`:
 * - `AUTH`: credentials missing or wrong (rc/HTTP 401, `secret not valid`, ...).
 * - `PERMISSION`: the subscription plan lacks the API feature (403, `Paket user tidak memiliki fitur API`).
 * - `NOT_FOUND`: unknown conversation or merchant (404, `conversation not found`).
 * - `VALIDATION`: the request was refused as invalid, by the platform or before sending (attempts 0).
 * - `RATE_LIMITED`: 429; `retryAfterMs` says how long to pause when the platform said so.
 * - `SERVER`: the platform failed (5xx) on a call that is safe to repeat. On a send or note a 5xx
 *   is OUTCOME_UNKNOWN instead, whatever its text.
 * - `NETWORK`: no HTTP answer (refused, DNS, reset) on a call that was safe to repeat.
 * - `TIMEOUT`: no answer within `timeoutMs` on a call that was safe to repeat.
 * - `OUTCOME_UNKNOWN`: a send or note failed in a way that does not prove it was not acted on
 *   (timeout, reset after writing, any 5xx); reconcile against the history before sending again.
 * - `CONTRACT`: the platform answered something that does not match the interface.
 */
export const PLATFORM_ERROR_CODES = [
  'AUTH',
  'PERMISSION',
  'NOT_FOUND',
  'VALIDATION',
  'RATE_LIMITED',
  'SERVER',
  'NETWORK',
  'TIMEOUT',
  'OUTCOME_UNKNOWN',
  'CONTRACT',
] as const;
export type PlatformErrorCode = (typeof PLATFORM_ERROR_CODES)[number];

/** Codes that a later repetition of the same request may cure (the retry loop's and the worker's cue). */
export const RETRYABLE_CODES: ReadonlySet<PlatformErrorCode> = new Set([
  'RATE_LIMITED',
  'SERVER',
  'NETWORK',
  'TIMEOUT',
]);

const HINTS: Readonly<Record<PlatformErrorCode, string>> = {
  AUTH: 'check the client auth scheme, businessId and secret against the dashboard settings',
  PERMISSION: 'the subscription plan does not include this API feature; check the plan in the dashboard',
  NOT_FOUND: 'check the conversation id (it comes from the channel.message_in webhook) and the business id',
  VALIDATION: 'fix the request parameters; repeating the same request will fail again',
  RATE_LIMITED: 'slow down and retry later',
  SERVER: 'the platform failed without acting; retry later',
  NETWORK: 'the platform could not be reached; check baseUrl and the network',
  TIMEOUT: 'the platform did not answer in time; raise timeoutMs or retry later',
  OUTCOME_UNKNOWN: 'the platform may have acted on it; check the conversation history before sending again',
  CONTRACT:
    "the answer does not match the interface; check that `form` ('current' or 'earlier') and baseUrl are right",
};

export interface PlatformErrorDetails {
  code: PlatformErrorCode;
  operation: PlatformOperation;
  method: string;
  /** Request path without query string, e.g. `/v1/message/conv-1`. Never carries credentials. */
  path: string;
  /** HTTP status of the answer; null when there was none (network, timeout, refused before sending). */
  statusCode: number | null;
  /** The envelope's `rc`, when it had one. */
  rc: number | null;
  /** The platform's own text (`error_msg`/`message`, or a plain-text body), shortened. */
  platformMessage: string | null;
  /** How long the platform asked us to wait (`Retry-After`), for RATE_LIMITED. */
  retryAfterMs: number | null;
  /** HTTP attempts made for this call; 0 when it was refused before anything was sent. */
  attempts: number;
  /** Extra words for the message (what was wrong with the answer, which field was invalid). */
  detail?: string;
  cause?: unknown;
}

/**
 * The one error type every platform call throws (besides ReplyWindowClosedError). Carries what a
 * caller needs to decide (code, retryable, retryAfterMs) and what a human needs to fix it; never
 * a secret or a full header set.
 */
export class PlatformError extends ConvoBridgeError {
  declare readonly code: PlatformErrorCode;
  readonly operation: PlatformOperation;
  readonly method: string;
  readonly path: string;
  readonly statusCode: number | null;
  readonly rc: number | null;
  readonly platformMessage: string | null;
  readonly retryAfterMs: number | null;
  readonly attempts: number;
  /** True when repeating the same request later may succeed (RATE_LIMITED, SERVER, NETWORK, TIMEOUT). */
  readonly retryable: boolean;

  constructor(details: PlatformErrorDetails) {
    super(formatMessage(details), { code: details.code, cause: details.cause });
    this.operation = details.operation;
    this.method = details.method;
    this.path = details.path;
    this.statusCode = details.statusCode;
    this.rc = details.rc;
    this.platformMessage = details.platformMessage;
    this.retryAfterMs = details.retryAfterMs;
    this.attempts = details.attempts;
    this.retryable = RETRYABLE_CODES.has(details.code);
  }
}

function formatMessage(d: PlatformErrorDetails): string {
  const facts: string[] = [d.code];
  if (d.statusCode !== null) facts.push(`HTTP ${d.statusCode}`);
  if (d.rc !== null) facts.push(`rc ${d.rc}`);
  if (d.attempts > 1) facts.push(`${d.attempts} attempts`);
  if (d.attempts === 0) facts.push('not sent');
  const said = [d.platformMessage === null ? '' : `platform said "${d.platformMessage}"`, d.detail ?? '']
    .filter((part) => part !== '')
    .join('; ');
  let hint = HINTS[d.code];
  if (d.code === 'RATE_LIMITED' && d.retryAfterMs !== null) {
    hint = `slow down: the platform asked to wait ${Math.ceil(d.retryAfterMs / 1000)} s`;
  }
  return `platform ${d.operation} (${d.method} ${d.path}) failed [${facts.join(', ')}]${said ? `: ${said}` : ''}; ${hint}`;
}

/**
 * True when `value` is a PlatformError (of `code`, when given). Also recognises one from a
 * duplicated copy of this module by its shape, so bundling twice does not break a caller's checks.
 */
export function isPlatformError<C extends PlatformErrorCode>(
  value: unknown,
  code?: C,
): value is PlatformError & { readonly code: C } {
  const shapeCode = value instanceof Error ? (value as Error & { code?: unknown }).code : undefined;
  const isOne =
    value instanceof PlatformError ||
    (value instanceof Error &&
      value.name === 'PlatformError' &&
      typeof shapeCode === 'string' &&
      (PLATFORM_ERROR_CODES as readonly string[]).includes(shapeCode));
  return isOne && (code === undefined || (value as PlatformError).code === code);
}
