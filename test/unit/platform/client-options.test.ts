import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PlatformClientOptionsError, resolveClientOptions } from '../../../src/platform/client-options.js';

const SECRET = 'top-secret-value';
const valid = {
  baseUrl: 'https://api.example.com/',
  form: 'current',
  auth: { scheme: 'headers', businessId: 'biz-1', secret: SECRET },
} as const;

const problemsOf = (input: unknown): readonly string[] => {
  try {
    resolveClientOptions(input);
  } catch (error) {
    if (error instanceof PlatformClientOptionsError) return error.problems;
    throw error;
  }
  throw new Error('expected the options to be rejected');
};

describe('resolveClientOptions', () => {
  it('fills in the defaults', () => {
    expect(resolveClientOptions(valid)).toEqual({
      baseUrl: 'https://api.example.com',
      form: 'current',
      auth: { scheme: 'headers', businessId: 'biz-1', secret: SECRET },
      timeoutMs: 10_000,
      retry: { retries: 3, minDelayMs: 100, maxDelayMs: 2000, maxRetryAfterMs: 5000 },
      hooks: {},
    });
  });

  it.each([
    [false, { retries: 0, minDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 }],
    [{ retries: 0 }, { retries: 0, minDelayMs: 100, maxDelayMs: 2000, maxRetryAfterMs: 5000 }],
    [
      { retries: 5, minDelayMs: 1, maxDelayMs: 10 },
      { retries: 5, minDelayMs: 1, maxDelayMs: 10, maxRetryAfterMs: 5000 },
    ],
  ])('retry %j -> %j', (retry, expected) => {
    expect(resolveClientOptions({ ...valid, retry }).retry).toEqual(expected);
  });

  it.each([
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://localhost:8080/', 'http://localhost:8080'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://api.example.com/base/', 'https://api.example.com/base'],
  ])('accepts baseUrl %s', (baseUrl, resolved) => {
    expect(resolveClientOptions({ ...valid, baseUrl }).baseUrl).toBe(resolved);
  });

  it('accepts plain http elsewhere only with allowInsecureHttp', () => {
    expect(
      resolveClientOptions({ ...valid, baseUrl: 'http://emulator:8080', allowInsecureHttp: true }).baseUrl,
    ).toBe('http://emulator:8080');
  });

  it.each([
    ['not an object', 'nope', ['options: Invalid input: expected object, received string']],
    [
      'no baseUrl',
      { ...valid, baseUrl: undefined },
      ['baseUrl: baseUrl must be a string such as https://api.example.com'],
    ],
    [
      'a relative baseUrl',
      { ...valid, baseUrl: '/v1' },
      ['baseUrl: baseUrl must be an absolute URL such as https://api.example.com'],
    ],
    ['an ftp baseUrl', { ...valid, baseUrl: 'ftp://example.com' }, ['baseUrl: baseUrl must use https']],
    [
      'plain http to a remote host',
      { ...valid, baseUrl: 'http://api.example.com' },
      [
        'baseUrl: baseUrl must use https (the secret travels in headers); plain http is allowed for loopback only, or set allowInsecureHttp',
      ],
    ],
    [
      'credentials in baseUrl',
      { ...valid, baseUrl: 'https://u:p@api.example.com' },
      ['baseUrl: baseUrl must not contain credentials; use auth'],
    ],
    [
      'a query in baseUrl',
      { ...valid, baseUrl: 'https://api.example.com/?x=1' },
      ['baseUrl: baseUrl must not have a query string or fragment'],
    ],
    ['an unknown form', { ...valid, form: 'v2' }, ["form: form must be 'current' or 'earlier'"]],
    [
      'an unknown scheme',
      { ...valid, auth: { ...valid.auth, scheme: 'basic' } },
      ["auth.scheme: auth.scheme must be 'headers', 'bearer' or 'bearer-secret'"],
    ],
    [
      'no secret',
      { ...valid, auth: { scheme: 'bearer-secret' } },
      ['auth.secret: auth.secret must be a string'],
    ],
    [
      'an empty secret',
      { ...valid, auth: { ...valid.auth, secret: '' } },
      ['auth.secret: auth.secret must not be empty'],
    ],
    [
      'a secret with a line break',
      { ...valid, auth: { ...valid.auth, secret: `${SECRET}\r\nX-Evil: 1` } },
      ['auth.secret: auth.secret must not contain line breaks'],
    ],
    [
      'a secret with spaces around',
      { ...valid, auth: { ...valid.auth, secret: ` ${SECRET}` } },
      ['auth.secret: auth.secret must not start or end with spaces'],
    ],
    [
      'headers without businessId',
      { ...valid, auth: { scheme: 'headers', secret: SECRET } },
      [
        "auth.businessId: auth scheme 'headers' needs auth.businessId (the Business ID from the dashboard settings)",
      ],
    ],
    [
      'bearer without businessId',
      { ...valid, auth: { scheme: 'bearer', secret: SECRET } },
      [
        "auth.businessId: auth scheme 'bearer' needs auth.businessId (the Business ID from the dashboard settings)",
      ],
    ],
    [
      'bearer with a colon in businessId',
      { ...valid, auth: { scheme: 'bearer', businessId: 'a:b', secret: SECRET } },
      [
        "auth.businessId: auth.businessId must not contain ':' with the 'bearer' scheme (it joins id and secret with ':')",
      ],
    ],
    [
      'an empty businessId',
      { ...valid, auth: { ...valid.auth, businessId: '' } },
      ['auth.businessId: auth.businessId must not be empty'],
    ],
    [
      'an unknown auth key',
      { ...valid, auth: { ...valid.auth, token: 'x' } },
      ['auth: Unrecognized key: "token"'],
    ],
    ['a zero timeout', { ...valid, timeoutMs: 0 }, ['timeoutMs: Too small: expected number to be >=1']],
    [
      'a fractional timeout',
      { ...valid, timeoutMs: 1.5 },
      ['timeoutMs: Invalid input: expected int, received number'],
    ],
    [
      'too many retries',
      { ...valid, retry: { retries: 11 } },
      ['retry.retries: Too big: expected number to be <=10'],
    ],
    [
      'negative retries',
      { ...valid, retry: { retries: -1 } },
      ['retry.retries: Too small: expected number to be >=0'],
    ],
    [
      'maxDelayMs below minDelayMs',
      { ...valid, retry: { minDelayMs: 500, maxDelayMs: 100 } },
      ['retry.maxDelayMs: maxDelayMs must be at least minDelayMs'],
    ],
    ['retry: true', { ...valid, retry: true }, ['retry: Invalid input']],
    [
      'a hook that is not a function',
      { ...valid, hooks: { beforeRequest: 'x' } },
      ['hooks.beforeRequest: hooks.beforeRequest must be a function'],
    ],
    ['an unknown option', { ...valid, retries: 3 }, ['options: Unrecognized key: "retries"']],
  ])('rejects %s', (_name, input, problems) => {
    expect(problemsOf(input)).toEqual(problems);
  });

  it('lists every problem at once', () => {
    expect(problemsOf({ baseUrl: 'x', form: 'x', auth: { scheme: 'x', secret: '' } })).toHaveLength(4);
  });

  it('never shows the secret in the error, its message or its cause', () => {
    const bad = {
      ...valid,
      baseUrl: 'http://api.example.com',
      auth: { ...valid.auth, secret: `${SECRET}\n` },
    };
    let caught: unknown;
    try {
      resolveClientOptions(bad);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PlatformClientOptionsError);
    expect((caught as PlatformClientOptionsError).code).toBe('INVALID_PLATFORM_CLIENT_OPTIONS');
    expect(inspect(caught, { depth: 20 })).not.toContain(SECRET);
    expect(JSON.stringify((caught as PlatformClientOptionsError).cause)).not.toContain(SECRET);
  });
});
