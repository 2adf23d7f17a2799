import type { RetrySettings } from './client-options.js';
import type { PlatformErrorCode } from './platform-error.js';

/*
 * The client's retry policy, in one place (docs/client.md repeats it).
 *
 * Owner: one short p-retry loop per call (execute-request.ts); got's own retry is off. BullMQ's
 * attempts own the long tail, and a RATE_LIMITED with a long Retry-After is handed to the worker
 * to pause its queue rather than waited out here.
 *
 * What is retried within a call:
 * - RATE_LIMITED (429 / rc 429): after Retry-After when it is at most `maxRetryAfterMs`
 *   (default 5 s); a longer Retry-After fails at once with `retryAfterMs` set. Without
 *   Retry-After, the backoff below.
 * - SERVER, NETWORK, TIMEOUT: exponential backoff with full jitter: retry n waits a random time
 *   in [0, min(maxDelayMs, minDelayMs * 2^(n-1))].
 * - Never: AUTH, PERMISSION, NOT_FOUND, VALIDATION, CONTRACT, OUTCOME_UNKNOWN.
 * Sends and notes (not idempotent on the platform) only ever see the retryable codes when the
 * request provably never reached the platform or was refused unacted: refused connection, DNS
 * failure, 429. Anything else that is transient, any 5xx included (even `error create note`,
 * which does not prove the note was not stored), becomes OUTCOME_UNKNOWN (classify-response.ts).
 *
 * Worst case HTTP requests, with R = `retry.retries` (default 3, at most 10; 0 when retry: false):
 * - sendMessage, addNote, markNeedHuman, getMessages, getNeedHumanTotal, getVersion: R + 1
 *   (default 4).
 * - iterateMessages, current form: pages x (R + 1), where pages <= min(maxPages (default 1000),
 *   ceil(new messages / pageSize) + 1); the walk stops at the first page that brings no message
 *   beyond the cursor, so a server whose cursor does not advance costs one extra page only.
 * - iterateMessages, earlier form: R + 1 (one page holds every message).
 * Worst-case time per request chain: (R + 1) x timeoutMs + R x max(maxDelayMs, maxRetryAfterMs),
 * plus whatever `hooks.beforeRequest` waits.
 */

/** Transport error codes that prove the request never reached the server (no connection was made). */
export const NEVER_REACHED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * `Retry-After` as milliseconds: delta-seconds (`120`) or an HTTP date (RFC 9110 §10.2.3).
 * Returns null when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.min(Math.round(Number(text) * 1000), MAX_RETRY_AFTER_MS);
  // Only date-like text: Date.parse would read a bare "12" or "-1" as a year.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/** Full-jitter exponential backoff for retry number `retry` (1 = the first retry). */
export function backoffDelay(
  retry: number,
  settings: RetrySettings,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.minDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/**
 * Whether to repeat a failed attempt now, and after how long. `retry` is the number the next
 * attempt would have as a retry (1 for the first); `retriesLeft` what the budget still allows.
 */
export function decideRetry(
  failure: { code: PlatformErrorCode; retryAfterMs: number | null },
  retry: number,
  retriesLeft: number,
  settings: RetrySettings,
  random: () => number = Math.random,
): RetryDecision {
  if (retriesLeft <= 0) return { retry: false };
  switch (failure.code) {
    case 'RATE_LIMITED':
      if (failure.retryAfterMs === null)
        return { retry: true, delayMs: backoffDelay(retry, settings, random) };
      if (failure.retryAfterMs > settings.maxRetryAfterMs) return { retry: false };
      return { retry: true, delayMs: failure.retryAfterMs };
    case 'SERVER':
    case 'NETWORK':
    case 'TIMEOUT':
      return { retry: true, delayMs: backoffDelay(retry, settings, random) };
    default:
      return { retry: false };
  }
}
