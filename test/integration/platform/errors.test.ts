import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformClientOptions } from '../../../src/platform/client-options.js';
import { createPlatformClient } from '../../../src/platform/create-platform-client.js';
import { isPlatformError, type PlatformError } from '../../../src/platform/platform-error.js';
import {
  type PlatformTestServer,
  type Reply,
  startPlatformTestServer,
} from '../../support/platform-test-server.js';

const SECRET = 'sk_live_never_log_me';
const BUSINESS = 'biz-42';

let server: PlatformTestServer;
beforeAll(async () => {
  server = await startPlatformTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
});

// Retries off: these tests are about classification, one answer each.
const client = (form: 'current' | 'earlier', overrides: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({
    baseUrl: server.url,
    form,
    auth: { scheme: 'bearer', businessId: BUSINESS, secret: SECRET },
    retry: false,
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

const INVALID = 'Data tidak valid. Mohon periksa kembali parameter dan header';

describe('error envelopes, current form (HTTP 200, status 0)', () => {
  it.each<[string, unknown, string]>([
    ['auth failure', { status: 0, rc: 401, error_msg: INVALID }, 'AUTH'],
    ['bad parameters', { status: 0, rc: 400, error_msg: INVALID }, 'VALIDATION'],
    ['secret not valid', { status: 0, rc: 401, error_msg: 'secret not valid' }, 'AUTH'],
    ['api key not valid', { status: 0, rc: 400, error_msg: 'API key not valid' }, 'AUTH'],
    ['no active plan', { status: 0, rc: 400, error_msg: 'Anda belum memiliki paket aktif' }, 'PERMISSION'],
    [
      'plan without API',
      { status: 0, rc: 403, error_msg: 'Paket user tidak memiliki fitur API' },
      'PERMISSION',
    ],
    ['merchant not found', { status: 0, rc: 404, error_msg: 'merchant not found' }, 'NOT_FOUND'],
    ['conversation not found', { status: 0, rc: 400, error_msg: 'conversation not found' }, 'NOT_FOUND'],
    ['biz id is required', { status: 0, rc: 400, error_msg: 'biz id is required' }, 'VALIDATION'],
    [
      'conversation_id is required',
      { status: 0, rc: 400, error_msg: 'conversation_id is required' },
      'VALIDATION',
    ],
    [
      'conversation id is required',
      { status: 0, rc: 400, error_msg: 'conversation id is required' },
      'VALIDATION',
    ],
    ['note is required', { status: 0, rc: 400, error_msg: 'note is required' }, 'VALIDATION'],
    ['media type not supported', { status: 0, rc: 400, error_msg: 'media type not supported' }, 'VALIDATION'],
    [
      'media mime type not supported',
      { status: 0, rc: 400, error_msg: 'Media mime type not supported' },
      'VALIDATION',
    ],
    ['error create note', { status: 0, rc: 500, error_msg: 'error create note' }, 'SERVER'],
    ['error update lock by human', { status: 0, rc: 500, error_msg: 'error update lock by human' }, 'SERVER'],
    ['error count conversation', { status: 0, rc: 500, error_msg: 'error count conversation' }, 'SERVER'],
    ['rc 429', { status: 0, rc: 429, error_msg: 'Too many requests' }, 'RATE_LIMITED'],
    ['rc 500 without a known text', { status: 0, rc: 500, error_msg: 'internal' }, 'SERVER'],
    ['an unexplained refusal', { status: 0, message: 'tidak bisa' }, 'VALIDATION'],
  ])('%s -> %s', async (_name, body, code) => {
    server.enqueue('GET /v1/conversation/need-human/total', { json: body });
    const error = await failureOf(client('current').getNeedHumanTotal());
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe(200);
    expect(error.attempts).toBe(1);
    expect(error.platformMessage).toBe(
      (body as { error_msg?: string; message?: string }).error_msg ?? (body as { message: string }).message,
    );
  });
});

describe('error envelopes, earlier form (HTTP codes, or HTTP 200 with status 0)', () => {
  it.each<[string, string, Reply, number | null]>([
    [
      '400 invalid data',
      'VALIDATION',
      { status: 400, json: { status: 0, rc: 400, error_msg: INVALID } },
      400,
    ],
    [
      '400 conversation_id required',
      'VALIDATION',
      { status: 400, json: { status: 0, rc: 400, error_msg: 'conversation_id is required' } },
      400,
    ],
    ['401 with status/message', 'AUTH', { status: 401, json: { status: 0, message: INVALID } }, null],
    ['401 plain text', 'AUTH', { status: 401, text: 'Unauthorized' }, null],
    ['403', 'PERMISSION', { status: 403, json: { status: 0, message: 'Insufficient permission' } }, null],
    ['404', 'NOT_FOUND', { status: 404, json: { status: 0, message: 'merchant not found' } }, null],
    [
      '429',
      'RATE_LIMITED',
      { status: 429, json: { status: 0, message: 'Too many requests, please try again later' } },
      null,
    ],
    ['500', 'SERVER', { status: 500, json: { status: 0, message: 'Internal server error' } }, null],
    ['502 HTML', 'SERVER', { status: 502, text: '<html><body>Bad Gateway</body></html>' }, null],
    ['200 + status 0 + secret not valid', 'AUTH', { json: { status: 0, message: 'secret not valid' } }, null],
    [
      '200 + status 0 + plan text',
      'PERMISSION',
      { json: { status: 0, message: 'Paket user tidak memiliki fitur API' } },
      null,
    ],
    [
      '200 + success false',
      'NOT_FOUND',
      { json: { success: false, message: 'conversation not found' } },
      null,
    ],
  ])('%s -> %s', async (_name, code, reply, rc) => {
    server.enqueue('GET /v1/conversation/need-human/total', reply);
    const error = await failureOf(client('earlier').getNeedHumanTotal());
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe('status' in reply ? reply.status : 200);
    expect(error.rc).toBe(rc);
  });
});

describe('the same failure on a send or a note', () => {
  it.each<[string, Reply, string]>([
    ['HTTP 500', { status: 500, json: { status: 0, message: 'Internal server error' } }, 'OUTCOME_UNKNOWN'],
    ['rc 500 on HTTP 200', { json: { status: 0, rc: 500, error_msg: 'internal' } }, 'OUTCOME_UNKNOWN'],
    ['HTTP 503 text', { status: 503, text: 'Service Unavailable' }, 'OUTCOME_UNKNOWN'],
    [
      'error create note',
      { json: { status: 0, rc: 500, error_msg: 'error create note' } },
      'OUTCOME_UNKNOWN',
    ],
    [
      'conversation not found',
      { json: { status: 0, rc: 400, error_msg: 'conversation not found' } },
      'NOT_FOUND',
    ],
    ['note is required', { json: { status: 0, rc: 400, error_msg: 'note is required' } }, 'VALIDATION'],
  ])('addNote: %s -> %s', async (_name, reply, code) => {
    server.enqueue('POST /v1/note', reply);
    expect((await failureOf(client('current').addNote('conv-1', 'x'))).code).toBe(code);
  });
});

describe('answers that do not fit the interface (CONTRACT)', () => {
  it.each<[string, 'current' | 'earlier', string, Reply, () => Promise<unknown>, string]>([
    [
      'history in the wrong form',
      'earlier',
      'GET /v1/message/c1',
      { json: { status: 1, data: { list: [], last_id: 0 } } },
      () => client('earlier').getMessages('c1'),
      'history answer does not fit the earlier form: data: Invalid input: expected array, received object',
    ],
    [
      'history that is HTML',
      'current',
      'GET /v1/message/c1',
      { text: '<html>login</html>' },
      () => client('current').getMessages('c1'),
      'the body is not JSON (an HTML page of 18 characters)',
    ],
    [
      'a send without a success marker',
      'current',
      'POST /v1/message',
      { json: { ok: 1 } },
      () => client('current').sendMessage({ conversationId: 'c1', text: 'x' }),
      'no success marker (expected "success": true or "status": 1) in a JSON object {ok: number}',
    ],
    [
      'a total that is not a number',
      'current',
      'GET /v1/conversation/need-human/total',
      { json: { status: 1, data: { total: 'lots' } } },
      () => client('current').getNeedHumanTotal(),
      'no non-negative integer total in a JSON object {status: number, data: object}',
    ],
    [
      'a version page',
      'current',
      'GET /version',
      { text: '<!doctype html><title>Home</title>' },
      () => client('current').getVersion(),
      'no version in an HTML page of 34 characters',
    ],
    [
      'a redirect',
      'current',
      'GET /version',
      { status: 302, headers: { location: 'https://example.com/login' }, text: '' },
      () => client('current').getVersion(),
      'unexpected redirect (HTTP 302); point baseUrl at the final address',
    ],
  ])('%s', async (_name, _form, route, reply, call, detail) => {
    server.enqueue(route, reply);
    const error = await failureOf(call());
    expect(error.code).toBe('CONTRACT');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain(detail);
    expect(error.message).toContain("check that `form` ('current' or 'earlier') and baseUrl are right");
  });
});

describe('what an error carries', () => {
  it('method, path, status, rc, the platform text, retryable, attempts; no secret anywhere', async () => {
    server.enqueue('POST /v1/note', { json: { status: 0, rc: 401, error_msg: INVALID } });
    const error = await failureOf(client('current').addNote('conv-1', 'x'));
    expect(error).toMatchObject({
      name: 'PlatformError',
      code: 'AUTH',
      operation: 'addNote',
      method: 'POST',
      path: '/v1/note',
      statusCode: 200,
      rc: 401,
      platformMessage: INVALID,
      retryable: false,
      attempts: 1,
      retryAfterMs: null,
    });
    expect(error.message).toBe(
      `platform addNote (POST /v1/note) failed [AUTH, HTTP 200, rc 401]: platform said "${INVALID}"; ` +
        'check the client auth scheme, businessId and secret against the dashboard settings',
    );
    const token = Buffer.from(`${BUSINESS}:${SECRET}`).toString('base64');
    const everything = inspect(error, { depth: 20 });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(token);
  });

  it('a transport failure keeps the underlying error as cause, without the request options (secret)', async () => {
    server.enqueue('GET /version', { destroy: true });
    const error = await failureOf(
      client('current', { auth: { scheme: 'bearer-secret', secret: SECRET } }).getVersion(),
    );
    expect(error.code).toBe('NETWORK');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    expect(inspect(error, { depth: 20 })).not.toContain(SECRET);
  });
});
