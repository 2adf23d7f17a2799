import AgentKeepAlive from 'agentkeepalive';
import got, { RequestError, TimeoutError } from 'got';
import { definedOnlyRequest, installFastNativeOptions } from './got-native-options.js';

/** One HTTP exchange as the client needs it; nothing got-specific leaks past this file. */
export interface HttpCall {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  searchParams?: Record<string, string>;
  json?: Record<string, unknown>;
  timeoutMs: number;
}

export interface HttpAnswer {
  statusCode: number;
  retryAfter?: string;
  bodyText: string;
}

/** No HTTP answer at all: what classifyTransport needs, with the original error as cause. */
export class TransportFailure extends Error {
  readonly timedOut: boolean;
  readonly errorCode: string | undefined;

  constructor(timedOut: boolean, errorCode: string | undefined, cause: unknown) {
    super(timedOut ? 'request timed out' : `request failed (${errorCode ?? 'unknown'})`, { cause });
    this.name = 'TransportFailure';
    this.timedOut = timedOut;
    this.errorCode = errorCode;
  }
}

export type HttpTransport = (call: HttpCall) => Promise<HttpAnswer>;

/**
 * One pool of keep-alive connections for every call. A new TCP connection per send cost more than
 * the send itself under load (measured: connect/close showed in the bridge's CPU profile). Free
 * sockets are dropped after 4 s, before the common 5 s server keep-alive timeout, so a request
 * rarely meets a socket the server is closing; when it does, the reset of a send or note is an
 * OUTCOME_UNKNOWN and the worker looks in the history before sending again (never twice).
 */
const agents = {
  http: new AgentKeepAlive.HttpAgent({ keepAlive: true, freeSocketTimeout: 4_000, maxFreeSockets: 256 }),
  https: new AgentKeepAlive.HttpsAgent({ keepAlive: true, freeSocketTimeout: 4_000, maxFreeSockets: 256 }),
};

/**
 * got with every policy of its own switched off: no retry (p-retry owns that), no redirects, no
 * throwing on HTTP status (classify-response.ts reads both forms' envelopes), text body (GET
 * /version may be plain text), and a hard `timeout.request` on every call.
 */
/**
 * One got instance with the fixed policy built once: got normalises its options on every call,
 * and merging the fixed part per request cost about 60 us each (measured against a loopback
 * server: plain got 440 us, this instance 380 us, bare node:http 150 us per round trip).
 */
installFastNativeOptions();

const client = got.extend({
  agent: agents,
  headers: { accept: 'application/json, text/plain;q=0.9', 'user-agent': 'convo-bridge' },
  retry: { limit: 0 },
  followRedirect: false,
  throwHttpErrors: false,
  responseType: 'text',
  // The platform answers small JSON: negotiating compression only adds a decompression stream to
  // every response (measured: about 0.15 ms of CPU per call on loopback).
  decompress: false,
  // Node gets only the options that are set (see got-native-options.ts): about 10 us per call.
  request: definedOnlyRequest,
});

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * One exchange through got's stream interface: the promise interface adds a cancelable promise,
 * a second round of event proxies and a body collector per call (measured in
 * bench/transport-cost.ts: about 15% of got's client CPU per call), and the platform's answers are
 * small enough to collect here. The JSON body is serialised once, here.
 */
export const gotTransport: HttpTransport = (call) =>
  new Promise<HttpAnswer>((resolve, reject) => {
    const body = call.json === undefined ? undefined : JSON.stringify(call.json);
    const stream = client.stream(call.url, {
      method: call.method,
      headers: body === undefined ? call.headers : { ...call.headers, ...JSON_HEADERS },
      ...(call.searchParams ? { searchParams: call.searchParams } : {}),
      ...(body === undefined ? {} : { body }),
      timeout: { request: call.timeoutMs },
    });
    let statusCode = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    stream.once('response', (response: { statusCode: number; headers: Record<string, unknown> }) => {
      statusCode = response.statusCode;
      const value = response.headers['retry-after'];
      if (typeof value === 'string') retryAfter = value;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => {
      const answer: HttpAnswer = { statusCode, bodyText: Buffer.concat(chunks).toString('utf8') };
      if (retryAfter !== undefined) answer.retryAfter = retryAfter;
      resolve(answer);
    });
    stream.once('error', (error: unknown) => {
      if (error instanceof RequestError) {
        reject(new TransportFailure(error instanceof TimeoutError, error.code, underlying(error)));
        return;
      }
      reject(new TransportFailure(false, undefined, error));
    });
  });

/**
 * got's errors carry the request options, headers (and so the secret) included. The cause we
 * keep is the error underneath (the socket's ECONNRESET, got's inner timeout), or a copy of the
 * message and code when there is none, so that logging a PlatformError's cause never logs a secret.
 */
function underlying(error: RequestError): Error {
  if (error.cause instanceof Error && !(error.cause instanceof RequestError)) return error.cause;
  const copy = new Error(error.message) as Error & { code?: string };
  copy.name = error.name;
  copy.code = error.code;
  return copy;
}
