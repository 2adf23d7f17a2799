import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import type { PlatformRequest } from './build-requests.js';
import { classifyAnswer, classifyTransport, type Failure } from './classify-response.js';
import type { ResolvedClientOptions } from './client-options.js';
import { gotTransport, type HttpAnswer, type HttpTransport, TransportFailure } from './got-transport.js';
import type { ResponseBody } from './parse-responses.js';
import { PlatformError } from './platform-error.js';
import { decideRetry } from './retry-policy.js';

function decodeBody(text: string): ResponseBody {
  if (text.trim() === '') return { text, json: undefined };
  try {
    return { text, json: JSON.parse(text) as unknown };
  } catch {
    return { text, json: undefined };
  }
}

/**
 * Runs one call: hooks, HTTP attempts through the transport, classification, and the p-retry loop
 * (policy in retry-policy.ts). Throws PlatformError, or the error `hooks.beforeRequest` threw.
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
    let answer: HttpAnswer | undefined;
    let failure: Failure | undefined;
    let cause: unknown;
    let value: T | undefined;
    try {
      const call = {
        url: options.baseUrl + path,
        method,
        headers: request.headers,
        timeoutMs: options.timeoutMs,
        freshConnection: request.safety === 'creates',
        ...(request.searchParams ? { searchParams: request.searchParams } : {}),
        ...(request.json ? { json: request.json } : {}),
      };
      answer = await transport(call);
    } catch (error) {
      cause = error instanceof TransportFailure ? (error.cause ?? error) : error;
      failure =
        error instanceof TransportFailure
          ? classifyTransport({ timedOut: error.timedOut, errorCode: error.errorCode }, request.safety)
          : classifyTransport({ timedOut: false, errorCode: undefined }, request.safety);
    }
    if (answer) {
      const body = decodeBody(answer.bodyText);
      const facts =
        answer.retryAfter === undefined
          ? { statusCode: answer.statusCode, body }
          : { statusCode: answer.statusCode, retryAfter: answer.retryAfter, body };
      failure = classifyAnswer(facts, request.safety, Date.now()) ?? undefined;
      if (!failure) {
        const parsed = request.parse(body);
        if (parsed.ok) value = parsed.value;
        else {
          failure = {
            code: 'CONTRACT',
            statusCode: answer.statusCode,
            rc: null,
            platformMessage: null,
            retryAfterMs: null,
            detail: parsed.problem,
          };
        }
      }
    }
    try {
      hooks.afterResponse?.({
        operation,
        method,
        path,
        attempt,
        statusCode: answer?.statusCode ?? null,
        outcome: failure ? failure.code : 'ok',
        durationMs: Math.round(performance.now() - started),
      });
    } catch {
      // Metrics must never fail a call (a failed metric on a sent message would invite a resend).
    }
    if (!failure) return value as T;

    const error = new PlatformError({ ...failure, operation, method, path, attempts: attempt, cause });
    const decision = decideRetry(failure, attempt, settings.retries - (attempt - 1), settings);
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
