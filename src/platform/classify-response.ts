import type { OperationSafety } from './operations.js';
import type { ResponseBody } from './parse-responses.js';
import type { PlatformErrorCode } from './platform-error.js';
import { NEVER_REACHED_CODES, parseRetryAfter } from './retry-policy.js';

/** What went wrong with one attempt, before it becomes a PlatformError (which adds the call's context). */
export interface Failure {
  code: PlatformErrorCode;
  statusCode: number | null;
  rc: number | null;
  platformMessage: string | null;
  retryAfterMs: number | null;
  detail?: string;
}

/**
 * Known error texts (webhook-payloads.md §3 and the spec's "Errors"), matched case-insensitively
 * by substring, most specific first. `AUTH_OR_VALIDATION` is the "Data tidak valid" text, which the
 * platform uses for bad credentials (rc 401) and for bad parameters (rc 400) alike.
 */
const KNOWN_TEXTS: ReadonlyArray<readonly [string, PlatformErrorCode | 'AUTH_OR_VALIDATION']> = [
  ['too many requests', 'RATE_LIMITED'],
  ['data tidak valid', 'AUTH_OR_VALIDATION'],
  ['secret not valid', 'AUTH'],
  ['api key not valid', 'AUTH'],
  ['anda belum memiliki paket aktif', 'PERMISSION'],
  ['paket user tidak memiliki fitur api', 'PERMISSION'],
  ['merchant not found', 'NOT_FOUND'],
  ['conversation not found', 'NOT_FOUND'],
  ['biz id is required', 'VALIDATION'],
  ['conversation_id is required', 'VALIDATION'],
  ['conversation id is required', 'VALIDATION'],
  ['note is required', 'VALIDATION'],
  ['media mime type not supported', 'VALIDATION'],
  ['media type not supported', 'VALIDATION'],
  // Server-side texts that name the step that failed. webhook-payloads.md §3 calls them only
  // "server side": they do not prove that nothing was created, so on a note `error create note`
  // is OUTCOME_UNKNOWN like any other 5xx (see classifyAnswer; conformance finding).
  ['error create note', 'SERVER'],
  ['error update lock by human', 'SERVER'],
  ['error count conversation', 'SERVER'],
];

export function classifyErrorText(text: string): PlatformErrorCode | 'AUTH_OR_VALIDATION' | null {
  const lower = text.toLowerCase();
  for (const [needle, code] of KNOWN_TEXTS) if (lower.includes(needle)) return code;
  return null;
}

function codeForStatus(status: number): PlatformErrorCode | null {
  if (status === 429) return 'RATE_LIMITED';
  if (status === 401) return 'AUTH';
  if (status === 403) return 'PERMISSION';
  if (status === 404) return 'NOT_FOUND';
  if (status >= 500 && status <= 599) return 'SERVER';
  if (status >= 400 && status <= 499) return 'VALIDATION';
  return null;
}

const asNumber = (value: unknown): number | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return null;
};

const firstText = (...values: unknown[]): string | null => {
  for (const value of values) if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return null;
};

const shorten = (text: string, max = 300): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
};

export interface AnswerFacts {
  statusCode: number;
  retryAfter?: string;
  body: ResponseBody;
}

/**
 * Decides whether an HTTP answer is an error, and which. Returns null for a success answer (to be
 * parsed by parse-responses.ts). Error deliveries handled (spec "Errors", webhook-payloads.md §3):
 * - current form: HTTP 200 with `{"status":0,"rc":401,"error_msg":"..."}`;
 * - earlier form: HTTP 400/401/403/404/429/500 with a JSON or plain-text body, or HTTP 200 with
 *   `{"status":0,"message":"..."}`; older docs also answer `{"success":false,...}`.
 * Precedence: rate limit (HTTP/rc 429 or its text), then a known text (it names the cause more
 * precisely than the platform's loosely used rc), then rc, then the HTTP status. An explicit
 * refusal with none of these is VALIDATION: the platform answered and declined, so repeating it
 * would not help.
 */
export function classifyAnswer(facts: AnswerFacts, safety: OperationSafety, nowMs: number): Failure | null {
  const { statusCode, body } = facts;
  const envelope =
    body.json !== null && typeof body.json === 'object' && !Array.isArray(body.json)
      ? (body.json as Record<string, unknown>)
      : undefined;
  const status = asNumber(envelope?.status);
  const rc = asNumber(envelope?.rc);
  const refused =
    status === 0 ||
    envelope?.success === false ||
    envelope?.success === 'false' ||
    (rc !== null && rc >= 400);

  if (statusCode >= 300 && statusCode < 400) {
    return {
      code: 'CONTRACT',
      statusCode,
      rc,
      platformMessage: null,
      retryAfterMs: null,
      detail: `unexpected redirect (HTTP ${statusCode}); point baseUrl at the final address`,
    };
  }
  if (statusCode < 400 && !refused) return null;

  const platformMessage =
    firstText(envelope?.error_msg, envelope?.message, envelope?.error, envelope?.msg) ??
    (envelope === undefined && body.text.trim() !== '' ? body.text : null);
  const text = platformMessage === null ? null : shorten(platformMessage);
  const byText = text === null ? null : classifyErrorText(text);
  const numeric = [rc, statusCode >= 400 ? statusCode : null].filter((n): n is number => n !== null);

  let code: PlatformErrorCode;
  if (numeric.includes(429) || byText === 'RATE_LIMITED') code = 'RATE_LIMITED';
  else if (byText === 'AUTH_OR_VALIDATION')
    code = numeric.includes(400) && !numeric.includes(401) ? 'VALIDATION' : 'AUTH';
  else if (byText !== null) code = byText;
  else code = numeric.map(codeForStatus).find((c): c is PlatformErrorCode => c !== null) ?? 'VALIDATION';

  // A send or note that failed on the server side may have been acted on: the caller has to
  // reconcile against the history instead of repeating it. No error text is taken as proof of the
  // opposite: webhook-payloads.md §3 lists `error create note` under "server side" and no more,
  // and a note "cannot be deleted" once sent (spec, "Note"), so a wrong guess is permanent. The
  // emulator answers `error create note` after storing the note (fault mode `after`), and the
  // client used to retry it into duplicates (conformance finding).
  if (code === 'SERVER' && safety === 'creates') code = 'OUTCOME_UNKNOWN';

  const failure: Failure = {
    code,
    statusCode,
    rc,
    platformMessage: text,
    retryAfterMs: code === 'RATE_LIMITED' ? parseRetryAfter(facts.retryAfter, nowMs) : null,
  };
  return failure;
}

/** A request that got no HTTP answer at all. */
export interface TransportFacts {
  /** got's `timeout.request` fired. */
  timedOut: boolean;
  /** The system/got error code (`ECONNREFUSED`, `ECONNRESET`, ...), when there is one. */
  errorCode: string | undefined;
}

/**
 * No answer: refused, DNS, reset, timeout. For calls that are safe to repeat that is NETWORK or
 * TIMEOUT. For sends and notes only a failure before any connection existed proves nothing was
 * received; a timeout or a reset after the request was written is OUTCOME_UNKNOWN.
 */
export function classifyTransport(facts: TransportFacts, safety: OperationSafety): Failure {
  const base = { statusCode: null, rc: null, platformMessage: null, retryAfterMs: null };
  const what = facts.timedOut
    ? 'no answer before the timeout'
    : `connection failed (${facts.errorCode ?? 'unknown error'})`;
  if (safety === 'creates' && !(facts.errorCode !== undefined && NEVER_REACHED_CODES.has(facts.errorCode))) {
    return { ...base, code: 'OUTCOME_UNKNOWN', detail: what };
  }
  return { ...base, code: facts.timedOut ? 'TIMEOUT' : 'NETWORK', detail: what };
}
