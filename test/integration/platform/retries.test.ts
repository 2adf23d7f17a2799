import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type {
  AfterResponseInfo,
  BeforeRequestInfo,
  PlatformClientOptions,
} from '../../../src/platform/client-options.js';
import { createPlatformClient } from '../../../src/platform/create-platform-client.js';
import { isPlatformError, type PlatformError } from '../../../src/platform/platform-error.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { type PlatformTestServer, startPlatformTestServer } from '../../support/platform-test-server.js';

const SECRET = 'sk_live_retry_secret';
// Short waits so the suite stays quick; the policy itself is unit-tested in retry-policy.test.ts.
const FAST = { retries: 3, minDelayMs: 1, maxDelayMs: 5 };

let server: PlatformTestServer;
const extraServers: PlatformTestServer[] = [];
beforeAll(async () => {
  server = await startPlatformTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
});
afterEach(async () => {
  for (const extra of extraServers.splice(0)) await extra.close();
});

const client = (overrides: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({
    baseUrl: server.url,
    form: 'current',
    auth: { scheme: 'bearer-secret', secret: SECRET },
    retry: FAST,
    timeoutMs: 2000,
    ...overrides,
  });

async function failureOf(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (isPlatformError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlatformError');
}

const OK_TOTAL = { json: { status: 1, message: 'Sukses', data: { total: 7 } } };
const OK_SEND = { json: { conversation_id: 'conv-1', success: true } };
const TOTAL = 'GET /v1/conversation/need-human/total';
const SEND = 'POST /v1/message';
const NOTE = 'POST /v1/note';
const NEED_HUMAN = 'POST /v1/conversation/need-human';

describe('GETs and need-human retry every transient failure', () => {
  it('5xx then success on a GET: 2 requests', async () => {
    server.enqueue(TOTAL, { status: 500, text: 'Internal Server Error' }, OK_TOTAL);
    expect(await client().getNeedHumanTotal()).toBe(7);
    expect(server.requestsTo(TOTAL)).toHaveLength(2);
  });

  it('rc 500 on HTTP 200 (current-form delivery) then success: 2 requests', async () => {
    server.enqueue(TOTAL, { json: { status: 0, rc: 500, error_msg: 'error count conversation' } }, OK_TOTAL);
    expect(await client().getNeedHumanTotal()).toBe(7);
    expect(server.requestsTo(TOTAL)).toHaveLength(2);
  });

  it('a socket reset on a GET is retried', async () => {
    server.enqueue(TOTAL, { destroy: true }, OK_TOTAL);
    expect(await client().getNeedHumanTotal()).toBe(7);
    expect(server.requestsTo(TOTAL)).toHaveLength(2);
  });

  it('gives up after retries + 1 requests with the last error', async () => {
    server.setDefault(TOTAL, { status: 503, text: 'Service Unavailable' });
    const error = await failureOf(client().getNeedHumanTotal());
    expect(error).toMatchObject({ code: 'SERVER', attempts: 4, retryable: true, statusCode: 503 });
    expect(error.message).toContain('[SERVER, HTTP 503, 4 attempts]');
    expect(server.requestsTo(TOTAL)).toHaveLength(4);
  });

  it('markNeedHuman is retried after a 5xx and after a reset (idempotent on the platform)', async () => {
    server.enqueue(
      NEED_HUMAN,
      { status: 500, json: { status: 0, message: 'error update lock by human' } },
      { destroy: true },
      { json: { success: true, conversation_id: 'conv-1' } },
    );
    await client().markNeedHuman('conv-1');
    expect(server.requestsTo(NEED_HUMAN)).toHaveLength(3);
  });

  it('400 is not retried: 1 request', async () => {
    server.enqueue(TOTAL, { status: 400, json: { status: 0, rc: 400, error_msg: 'biz id is required' } });
    const error = await failureOf(client().getNeedHumanTotal());
    expect(error).toMatchObject({ code: 'VALIDATION', attempts: 1, retryable: false });
    expect(server.requestsTo(TOTAL)).toHaveLength(1);
  });

  it.each([
    ['auth', { json: { status: 0, rc: 401, error_msg: 'secret not valid' } }, 'AUTH'],
    [
      'permission',
      { status: 403, json: { status: 0, message: 'Paket user tidak memiliki fitur API' } },
      'PERMISSION',
    ],
    ['not found', { status: 404, json: { status: 0, message: 'merchant not found' } }, 'NOT_FOUND'],
    ['contract', { json: { nothing: 'useful' } }, 'CONTRACT'],
  ])('%s is not retried', async (_name, reply, code) => {
    server.enqueue(TOTAL, reply);
    expect((await failureOf(client().getNeedHumanTotal())).code).toBe(code);
    expect(server.requestsTo(TOTAL)).toHaveLength(1);
  });

  it('retry: false makes one request', async () => {
    server.enqueue(TOTAL, { status: 500, text: 'boom' });
    expect((await failureOf(client({ retry: false }).getNeedHumanTotal())).attempts).toBe(1);
    expect(server.requestsTo(TOTAL)).toHaveLength(1);
  });
});

describe('rate limits', () => {
  it('429 with Retry-After: 1 waits about a second, then succeeds (also on a send)', async () => {
    server.enqueue(
      SEND,
      { status: 429, headers: { 'retry-after': '1' }, json: { status: 0, message: 'Too many requests' } },
      OK_SEND,
    );
    const started = performance.now();
    expect(await client().sendMessage({ conversationId: 'conv-1', text: 'halo' })).toEqual({
      conversationId: 'conv-1',
    });
    const elapsed = performance.now() - started;
    expect(server.requestsTo(SEND)).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2500);
  });

  it('429 with Retry-After: 120 fails at once as RATE_LIMITED with retryAfterMs 120000', async () => {
    server.enqueue(TOTAL, { status: 429, headers: { 'retry-after': '120' }, text: 'Too many requests' });
    const started = performance.now();
    const error = await failureOf(client().getNeedHumanTotal());
    expect(performance.now() - started).toBeLessThan(500);
    expect(error).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterMs: 120_000,
      retryable: true,
      attempts: 1,
    });
    expect(error.message).toContain('slow down: the platform asked to wait 120 s');
    expect(server.requestsTo(TOTAL)).toHaveLength(1);
  });

  it('Retry-After as an HTTP date beyond the cap also fails at once', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    server.enqueue(TOTAL, { status: 429, headers: { 'retry-after': at }, text: 'Too many requests' });
    const error = await failureOf(client().getNeedHumanTotal());
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.retryAfterMs).toBeGreaterThan(55_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('rc 429 in a current-form body without Retry-After is retried with backoff', async () => {
    server.enqueue(TOTAL, { json: { status: 0, rc: 429, error_msg: 'too many requests' } }, OK_TOTAL);
    expect(await client().getNeedHumanTotal()).toBe(7);
    expect(server.requestsTo(TOTAL)).toHaveLength(2);
  });

  it('a lower maxRetryAfterMs hands even short waits to the caller', async () => {
    server.enqueue(TOTAL, { status: 429, headers: { 'retry-after': '1' }, text: '' });
    const error = await failureOf(client({ retry: { ...FAST, maxRetryAfterMs: 500 } }).getNeedHumanTotal());
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 1000, attempts: 1 });
  });
});

describe('sends and notes are retried only when the request provably never arrived', () => {
  it('a POST /v1/message whose socket is reset after the server read the body: OUTCOME_UNKNOWN, 1 request', async () => {
    server.enqueue(SEND, { destroy: true }, OK_SEND);
    const error = await failureOf(client().sendMessage({ conversationId: 'conv-1', text: 'sekali saja' }));
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', attempts: 1, retryable: false, statusCode: null });
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    expect(server.requestsTo(SEND)).toHaveLength(1);
    expect(server.requestsTo(SEND)[0]?.json).toEqual({ conversation_id: 'conv-1', text: 'sekali saja' });
  });

  it('a 5xx on a send: OUTCOME_UNKNOWN, 1 request', async () => {
    server.enqueue(SEND, { status: 500, json: { status: 0, message: 'Internal server error' } }, OK_SEND);
    const error = await failureOf(client().sendMessage({ conversationId: 'conv-1', text: 'x' }));
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', statusCode: 500, attempts: 1 });
    expect(server.requestsTo(SEND)).toHaveLength(1);
  });

  it('a 5xx on a note: OUTCOME_UNKNOWN, 1 request', async () => {
    server.enqueue(NOTE, { status: 502, text: 'Bad Gateway' });
    expect((await failureOf(client().addNote('conv-1', 'x'))).code).toBe('OUTCOME_UNKNOWN');
    expect(server.requestsTo(NOTE)).toHaveLength(1);
  });

  it('`error create note` does not prove nothing was created: OUTCOME_UNKNOWN, 1 request', async () => {
    server.enqueue(
      NOTE,
      { json: { status: 0, rc: 500, error_msg: 'error create note' } },
      { json: { message_id: 'n-2', success: true } },
    );
    expect((await failureOf(client().addNote('conv-1', 'x'))).code).toBe('OUTCOME_UNKNOWN');
    expect(server.requestsTo(NOTE)).toHaveLength(1);
  });

  it('ECONNREFUSED on a send is retried; the platform receives the message once', async () => {
    const port = await findFreePort();
    const outcomes: string[] = [];
    let late: PlatformTestServer | undefined;
    const refused = client({
      baseUrl: `http://127.0.0.1:${port}`,
      hooks: {
        // The platform comes up between the first and the second attempt.
        beforeRequest: async ({ attempt }) => {
          if (attempt === 2) {
            late = await startPlatformTestServer({ port });
            late.setDefault(SEND, OK_SEND);
            extraServers.push(late);
          }
        },
        afterResponse: ({ outcome }) => {
          outcomes.push(outcome);
        },
      },
    });
    expect(await refused.sendMessage({ conversationId: 'conv-1', text: 'halo' })).toEqual({
      conversationId: 'conv-1',
    });
    expect(outcomes).toEqual(['NETWORK', 'ok']);
    expect(late?.requestsTo(SEND)).toHaveLength(1);
  });

  it('ECONNREFUSED every time: NETWORK after retries + 1 attempts', async () => {
    const port = await findFreePort();
    let attempts = 0;
    const refused = client({
      baseUrl: `http://127.0.0.1:${port}`,
      hooks: {
        beforeRequest: () => {
          attempts += 1;
        },
      },
    });
    const error = await failureOf(refused.addNote('conv-1', 'x'));
    expect(error).toMatchObject({ code: 'NETWORK', attempts: 4, retryable: true });
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(attempts).toBe(4);
  });
});

describe('timeouts', () => {
  it('a GET that outlives timeoutMs: TIMEOUT, retried', async () => {
    server.enqueue(TOTAL, { ...OK_TOTAL, delayMs: 1000 }, { ...OK_TOTAL, delayMs: 1000 });
    const started = performance.now();
    const error = await failureOf(
      client({ timeoutMs: 150, retry: { ...FAST, retries: 1 } }).getNeedHumanTotal(),
    );
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 2, retryable: true, statusCode: null });
    expect(error.message).toContain('no answer before the timeout');
    expect(server.requestsTo(TOTAL)).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(900);
  });

  it('a send that outlives timeoutMs: OUTCOME_UNKNOWN with the timeout as cause, 1 request', async () => {
    server.enqueue(SEND, { ...OK_SEND, delayMs: 1000 });
    const error = await failureOf(
      client({ timeoutMs: 150 }).sendMessage({ conversationId: 'conv-1', text: 'x' }),
    );
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', attempts: 1 });
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ETIMEDOUT');
    expect(server.requestsTo(SEND)).toHaveLength(1);
  });
});

describe('hooks', () => {
  it('beforeRequest is awaited before every attempt; afterResponse reports each one, without secrets', async () => {
    server.enqueue(
      TOTAL,
      { status: 500, text: 'boom' },
      { status: 429, text: 'Too many requests' },
      OK_TOTAL,
    );
    const before: Array<BeforeRequestInfo & { seenBefore: number; seenAfterWait: number }> = [];
    const after: AfterResponseInfo[] = [];
    const total = await client({
      hooks: {
        beforeRequest: async (info) => {
          const seenBefore = server.requests.length;
          await sleep(30);
          before.push({ ...info, seenBefore, seenAfterWait: server.requests.length });
        },
        afterResponse: (info) => {
          after.push(info);
        },
      },
    }).getNeedHumanTotal();
    expect(total).toBe(7);
    expect(before).toEqual(
      [1, 2, 3].map((attempt) => ({
        operation: 'getNeedHumanTotal',
        method: 'GET',
        path: '/v1/conversation/need-human/total',
        attempt,
        seenBefore: attempt - 1,
        seenAfterWait: attempt - 1,
      })),
    );
    expect(after.map(({ durationMs, ...rest }) => rest)).toEqual([
      {
        operation: 'getNeedHumanTotal',
        method: 'GET',
        path: '/v1/conversation/need-human/total',
        attempt: 1,
        statusCode: 500,
        outcome: 'SERVER',
      },
      {
        operation: 'getNeedHumanTotal',
        method: 'GET',
        path: '/v1/conversation/need-human/total',
        attempt: 2,
        statusCode: 429,
        outcome: 'RATE_LIMITED',
      },
      {
        operation: 'getNeedHumanTotal',
        method: 'GET',
        path: '/v1/conversation/need-human/total',
        attempt: 3,
        statusCode: 200,
        outcome: 'ok',
      },
    ]);
    for (const info of after) expect(info.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify([before, after])).not.toContain(SECRET);
  });

  it('an error thrown by beforeRequest fails the call unretried, before any request', async () => {
    const limiterDown = new Error('rate limiter unavailable');
    let calls = 0;
    const failing = client({
      hooks: {
        beforeRequest: () => {
          calls += 1;
          throw limiterDown;
        },
      },
    });
    await expect(failing.getNeedHumanTotal()).rejects.toBe(limiterDown);
    expect(calls).toBe(1);
    expect(server.requests).toHaveLength(0);
  });

  it('an error thrown by afterResponse does not fail the call', async () => {
    server.enqueue(SEND, OK_SEND);
    const metricsBroken = client({
      hooks: {
        afterResponse: () => {
          throw new Error('metrics registry exploded');
        },
      },
    });
    expect(await metricsBroken.sendMessage({ conversationId: 'conv-1', text: 'x' })).toEqual({
      conversationId: 'conv-1',
    });
    expect(server.requestsTo(SEND)).toHaveLength(1);
  });
});
