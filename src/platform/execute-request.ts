import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { activeTracing } from '../observe/trace-context.js';
import type { PlatformRequest } from './build-requests.js';
import { classifyAnswer, classifyTransport, type Failure } from './classify-response.js';
import type { ResolvedClientOptions } from './client-options.js';
import { gotTransport, type HttpTransport, TransportFailure } from './got-transport.js';
import type { ResponseBody } from './parse-responses.js';
import { PlatformError } from './platform-error.js';
import { quotePlatformText, sentTexts } from './quote-platform-text.js';
import { decideRetry } from './retry-policy.js';

type Exchange<T> = { statusCode: number | null } & (
  | { ok: true; value: T }
  | { ok: false; failure: Failure; cause?: unknown }
);

function decodeBody(text: string): ResponseBody {
  if (text.trim() === '') return { text, json: undefined };
  try {
    return { text, json: JSON.parse(text) as unknown };
  } catch {
    return { text, json: undefined };
  }
}

/**
 * The failure with the platform's text fit to quote: what we sent cut out of it and
 * personal data masked, since error messages reach logs, traces and dead letters.
 */
function quotable(failure: Failure, request: PlatformRequest<unknown>): Failure {
  if (failure.platformMessage === null) return failure;
  return { ...failure, platformMessage: quotePlatformText(failure.platformMessage, sentTexts(request.json)) };
}

/** One HTTP attempt, classified: a parsed success, or the Failure it ended with. */
async function exchange<T>(
  request: PlatformRequest<T>,
  options: ResolvedClientOptions,
  transport: HttpTransport,
): Promise<Exchange<T>> {
  let answer: Awaited<ReturnType<HttpTransport>>;
  try {
    answer = await transport({
      url: options.baseUrl + request.path,
      method: request.method,
      headers: request.headers,
      timeoutMs: options.timeoutMs,
      ...(request.searchParams ? { searchParams: request.searchParams } : {}),
      ...(request.json ? { json: request.json } : {}),
    });
  } catch (error) {
    const facts =
      error instanceof TransportFailure
        ? { timedOut: error.timedOut, errorCode: error.errorCode }
        : { timedOut: false, errorCode: undefined };
    const cause = error instanceof TransportFailure ? (error.cause ?? error) : error;
    return { statusCode: null, ok: false, failure: classifyTransport(facts, request.safety), cause };
  }
  const { statusCode } = answer;
  const body = decodeBody(answer.bodyText);
  const facts =
    answer.retryAfter === undefined
      ? { statusCode, body }
      : { statusCode, retryAfter: answer.retryAfter, body };
  const failure = classifyAnswer(facts, request.safety, Date.now());
  if (failure) return { statusCode, ok: false, failure: quotable(failure, request) };
  const parsed = request.parse(body);
  if (parsed.ok) return { statusCode, ok: true, value: parsed.value };
  return {
    statusCode,
    ok: false,
    failure: {
      code: 'CONTRACT',
      statusCode,
      rc: null,
      platformMessage: null,
      retryAfterMs: null,
      detail: parsed.problem,
    },
  };
}

/**
 * Runs one call: hooks, HTTP attempts through the transport (got by default), classification,
 * and the p-retry loop (policy and worst cases in retry-policy.ts). Throws PlatformError, or
 * unchanged the error that `hooks.beforeRequest` threw.
 */
export async function executeRequest<T>(
  request: PlatformRequest<T>,
  options: ResolvedClientOptions,
  transport: HttpTransport = gotTransport,
): Promise<T> {
  const { hooks, retry: settings } = options;
  const { operation, method, path } = request;
  let nextDelayMs = 0;

  const attemptOnce = async (attempt: number): Promise<T> => {
    try {
      await hooks.beforeRequest?.({ operation, method, path, attempt });
    } catch (error) {
      // The caller's own limiter failed: not ours to retry or to reclassify.
      throw new AbortError(error instanceof Error ? error : new Error(String(error)));
    }
    const started = performance.now();
    const span = activeTracing()?.platformCall(operation, { method, url: options.baseUrl + path, attempt });
    const result = await exchange(request, options, transport);
    if (span) {
      span.annotate({
        statusCode: result.statusCode,
        ...(result.ok ? {} : { errorType: result.failure.code }),
      });
      span.end();
    }
    try {
      hooks.afterResponse?.({
        operation,
        method,
        path,
        attempt,
        statusCode: result.statusCode,
        outcome: result.ok ? 'ok' : result.failure.code,
        durationMs: Math.round(performance.now() - started),
      });
    } catch {
      // Metrics must never fail a call (a failed metric on a sent message would invite a resend).
    }
    if (result.ok) return result.value;

    const error = new PlatformError({
      ...result.failure,
      operation,
      method,
      path,
      attempts: attempt,
      cause: result.cause,
    });
    const decision = decideRetry(result.failure, attempt, settings.retries - (attempt - 1), settings);
    if (!decision.retry) throw new AbortError(error);
    nextDelayMs = decision.delayMs;
    throw error;
  };

  return pRetry(attemptOnce, {
    retries: settings.retries,
    // p-retry counts and stops; the delay (full jitter or Retry-After) is ours, slept below.
    minTimeout: 0,
    maxTimeout: 0,
    randomize: false,
    onFailedAttempt: async () => {
      if (nextDelayMs > 0) await sleep(nextDelayMs);
      nextDelayMs = 0;
    },
  });
}
