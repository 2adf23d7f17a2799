import { describe, expect, it } from 'vitest';
import {
  classifyAnswer,
  classifyErrorText,
  classifyTransport,
} from '../../../src/platform/classify-response.js';

const NOW = Date.parse('2026-11-21T00:00:00Z');

const json = (value: unknown) => ({ text: JSON.stringify(value), json: value });
const text = (value: string) => ({ text: value, json: undefined });

describe('classifyErrorText (webhook-payloads.md §3, case-insensitive substring)', () => {
  it.each([
    ['Data tidak valid. Mohon periksa kembali parameter dan header', 'AUTH_OR_VALIDATION'],
    ['secret not valid', 'AUTH'],
    ['API KEY NOT VALID', 'AUTH'],
    ['merchant not found', 'NOT_FOUND'],
    ['Conversation not found', 'NOT_FOUND'],
    ['Anda belum memiliki paket aktif', 'PERMISSION'],
    ['Paket user tidak memiliki fitur API', 'PERMISSION'],
    ['biz id is required', 'VALIDATION'],
    ['conversation_id is required', 'VALIDATION'],
    ['conversation id is required', 'VALIDATION'],
    ['note is required', 'VALIDATION'],
    ['media type not supported', 'VALIDATION'],
    ['media mime type not supported', 'VALIDATION'],
    ['error create note', 'SERVER'],
    ['Error update lock by human', 'SERVER'],
    ['error count conversation', 'SERVER'],
    ['Too many requests, please try again later', 'RATE_LIMITED'],
    ['error: secret not valid (code 7)', 'AUTH'],
    ['something else entirely', null],
  ])('%j -> %s', (value, code) => {
    expect(classifyErrorText(value)).toBe(code);
  });
});

describe('classifyAnswer', () => {
  it.each([
    ['current success', 200, json({ conversation_id: 'c1', success: true })],
    ['earlier success', 200, json({ status: 1, message: 'Sukses' })],
    ['newer success with data', 200, json({ status: 1, message: 'Sukses', data: { total: 3 } })],
    [
      'history success with rc 200',
      200,
      json({ status: 1, rc: 200, message: 'list message', data: { list: null } }),
    ],
    ['plain-text version', 200, text('1.3')],
    ['empty 204', 204, text('')],
  ])('%s is not an error', (_name, statusCode, body) => {
    expect(classifyAnswer({ statusCode, body }, 'idempotent', NOW)).toBeNull();
  });

  it.each([
    // current form: HTTP 200, status 0, rc, error_msg
    [
      'rc 401 + invalid-data text',
      200,
      { status: 0, rc: 401, error_msg: 'Data tidak valid. Mohon periksa kembali parameter dan header' },
      'AUTH',
    ],
    [
      'rc 400 + invalid-data text',
      200,
      { status: 0, rc: 400, error_msg: 'Data tidak valid. Mohon periksa kembali parameter dan header' },
      'VALIDATION',
    ],
    [
      'invalid-data text alone',
      200,
      { status: 0, message: 'Data tidak valid. Mohon periksa kembali parameter dan header' },
      'AUTH',
    ],
    ['HTTP 400 + invalid-data text', 400, { status: 0, message: 'Data tidak valid' }, 'VALIDATION'],
    ['rc 401 without text', 200, { status: 0, rc: 401 }, 'AUTH'],
    ['rc 403', 200, { status: 0, rc: 403, error_msg: 'forbidden' }, 'PERMISSION'],
    ['rc 404', 200, { status: 0, rc: 404, error_msg: 'nope' }, 'NOT_FOUND'],
    ['rc 400 note is required', 200, { status: 0, rc: 400, error_msg: 'note is required' }, 'VALIDATION'],
    [
      'rc 400 conversation not found (text wins)',
      200,
      { status: 0, rc: 400, error_msg: 'conversation not found' },
      'NOT_FOUND',
    ],
    [
      'rc 400 plan text (text wins)',
      200,
      { status: 0, rc: 400, error_msg: 'Paket user tidak memiliki fitur API' },
      'PERMISSION',
    ],
    ['rc 500', 200, { status: 0, rc: 500, error_msg: 'boom' }, 'SERVER'],
    ['rc 429', 200, { status: 0, rc: 429, error_msg: 'slow down' }, 'RATE_LIMITED'],
    ['rc as a string', 200, { status: '0', rc: '401', error_msg: 'x' }, 'AUTH'],
    ['rc without status', 200, { rc: 404, error_msg: 'x' }, 'NOT_FOUND'],
    // earlier form: HTTP codes, or HTTP 200 + status 0
    ['earlier HTTP 401', 401, { status: 0, message: 'secret not valid' }, 'AUTH'],
    ['earlier HTTP 403', 403, { status: 0, message: 'Anda belum memiliki paket aktif' }, 'PERMISSION'],
    ['earlier HTTP 404', 404, { status: 0, message: 'merchant not found' }, 'NOT_FOUND'],
    ['earlier HTTP 400', 400, { status: 0, rc: 400, error_msg: 'conversation_id is required' }, 'VALIDATION'],
    ['earlier HTTP 429', 429, { status: 0, message: 'Too many requests, try again later' }, 'RATE_LIMITED'],
    ['earlier HTTP 500', 500, { status: 0, message: 'internal error' }, 'SERVER'],
    ['earlier HTTP 200 status 0 known text', 200, { status: 0, message: 'api key not valid' }, 'AUTH'],
    ['older success:false', 200, { success: false, message: 'conversation not found' }, 'NOT_FOUND'],
    ['explicit refusal without hints', 200, { status: 0, message: 'cannot do that' }, 'VALIDATION'],
    ['HTTP 409 without text', 409, {}, 'VALIDATION'],
    ['HTTP 503 with JSON', 503, { error: 'maintenance' }, 'SERVER'],
    [
      'known server text on HTTP 200',
      200,
      { status: 0, rc: 500, error_msg: 'error count conversation' },
      'SERVER',
    ],
  ])('%s -> %s', (_name, statusCode, body, code) => {
    expect(classifyAnswer({ statusCode, body: json(body) }, 'idempotent', NOW)?.code).toBe(code);
  });

  it.each([
    ['plain-text 500', 500, 'Internal Server Error', 'SERVER', 'Internal Server Error'],
    ['plain-text 429', 429, 'Too many requests', 'RATE_LIMITED', 'Too many requests'],
    [
      'HTML 502',
      502,
      '<html>\n<body>Bad   Gateway</body></html>',
      'SERVER',
      '<html> <body>Bad Gateway</body></html>',
    ],
    ['empty 401', 401, '', 'AUTH', null],
  ])('non-JSON %s -> %s, text kept', (_name, statusCode, body, code, platformMessage) => {
    const failure = classifyAnswer({ statusCode, body: text(body) }, 'idempotent', NOW);
    expect(failure?.code).toBe(code);
    expect(failure?.platformMessage).toBe(platformMessage);
  });

  it('keeps status, rc and the platform text', () => {
    const failure = classifyAnswer(
      { statusCode: 200, body: json({ status: 0, rc: 404, error_msg: 'conversation not found' }) },
      'creates',
      NOW,
    );
    expect(failure).toEqual({
      code: 'NOT_FOUND',
      statusCode: 200,
      rc: 404,
      platformMessage: 'conversation not found',
      retryAfterMs: null,
    });
  });

  it('reads Retry-After for a rate limit (seconds and HTTP date)', () => {
    const seconds = classifyAnswer({ statusCode: 429, retryAfter: '120', body: text('') }, 'idempotent', NOW);
    expect(seconds?.retryAfterMs).toBe(120_000);
    const date = classifyAnswer(
      { statusCode: 429, retryAfter: 'Sat, 21 Nov 2026 00:00:03 GMT', body: text('') },
      'creates',
      NOW,
    );
    expect(date).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 3000 });
    const none = classifyAnswer({ statusCode: 429, body: text('') }, 'idempotent', NOW);
    expect(none?.retryAfterMs).toBeNull();
  });

  it('ignores Retry-After on other errors', () => {
    expect(
      classifyAnswer({ statusCode: 503, retryAfter: '5', body: text('') }, 'idempotent', NOW)?.retryAfterMs,
    ).toBeNull();
  });

  it.each([
    ['HTTP 500', 500, { status: 0, message: 'internal error' }, 'OUTCOME_UNKNOWN'],
    ['rc 500 on HTTP 200', 200, { status: 0, rc: 500, error_msg: 'boom' }, 'OUTCOME_UNKNOWN'],
    ['HTTP 502 text', 502, 'Bad Gateway', 'OUTCOME_UNKNOWN'],
    [
      'error create note (does not prove nothing was created)',
      200,
      { status: 0, rc: 500, error_msg: 'error create note' },
      'OUTCOME_UNKNOWN',
    ],
    ['429 (answered without acting)', 429, { status: 0, message: 'too many requests' }, 'RATE_LIMITED'],
    ['400', 400, { status: 0, message: 'note is required' }, 'VALIDATION'],
  ])('on a send or note, %s -> %s', (_name, statusCode, body, code) => {
    const decoded = typeof body === 'string' ? text(body) : json(body);
    expect(classifyAnswer({ statusCode, body: decoded }, 'creates', NOW)?.code).toBe(code);
  });

  it.each([301, 302, 307])('a redirect (HTTP %i) is CONTRACT', (statusCode) => {
    const failure = classifyAnswer({ statusCode, body: text('') }, 'idempotent', NOW);
    expect(failure?.code).toBe('CONTRACT');
    expect(failure?.detail).toBe(
      `unexpected redirect (HTTP ${statusCode}); point baseUrl at the final address`,
    );
  });

  it('shortens a long platform text to 300 characters', () => {
    const failure = classifyAnswer({ statusCode: 500, body: text('x'.repeat(1000)) }, 'idempotent', NOW);
    expect(failure?.platformMessage).toBe(`${'x'.repeat(300)}...`);
  });
});

describe('classifyTransport', () => {
  it.each([
    [false, 'ECONNREFUSED', 'idempotent', 'NETWORK'],
    [false, 'ECONNRESET', 'idempotent', 'NETWORK'],
    [false, 'EPIPE', 'idempotent', 'NETWORK'],
    [false, undefined, 'idempotent', 'NETWORK'],
    [true, 'ETIMEDOUT', 'idempotent', 'TIMEOUT'],
    [false, 'ECONNREFUSED', 'creates', 'NETWORK'],
    [false, 'ENOTFOUND', 'creates', 'NETWORK'],
    [false, 'EAI_AGAIN', 'creates', 'NETWORK'],
    [false, 'EHOSTUNREACH', 'creates', 'NETWORK'],
    [false, 'ENETUNREACH', 'creates', 'NETWORK'],
    [false, 'ECONNRESET', 'creates', 'OUTCOME_UNKNOWN'],
    [false, 'EPIPE', 'creates', 'OUTCOME_UNKNOWN'],
    [false, undefined, 'creates', 'OUTCOME_UNKNOWN'],
    [true, 'ETIMEDOUT', 'creates', 'OUTCOME_UNKNOWN'],
  ] as const)('timedOut %s, %s on a %s call -> %s', (timedOut, errorCode, safety, code) => {
    expect(classifyTransport({ timedOut, errorCode }, safety).code).toBe(code);
  });

  it('says what happened', () => {
    expect(classifyTransport({ timedOut: true, errorCode: 'ETIMEDOUT' }, 'creates').detail).toBe(
      'no answer before the timeout',
    );
    expect(classifyTransport({ timedOut: false, errorCode: 'ECONNRESET' }, 'idempotent').detail).toBe(
      'connection failed (ECONNRESET)',
    );
  });
});
