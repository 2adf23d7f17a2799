import { describe, expect, it } from 'vitest';
import { ConvoBridgeError } from '../../../src/base/errors.js';
import {
  isPlatformError,
  PlatformError,
  type PlatformErrorDetails,
} from '../../../src/platform/platform-error.js';

const details = (override: Partial<PlatformErrorDetails> = {}): PlatformErrorDetails => ({
  code: 'AUTH',
  operation: 'addNote',
  method: 'POST',
  path: '/v1/note',
  statusCode: 200,
  rc: 401,
  platformMessage: 'Data tidak valid',
  retryAfterMs: null,
  attempts: 1,
  ...override,
});

describe('PlatformError', () => {
  it('says what failed, where, what the platform said and what to do', () => {
    const error = new PlatformError(details());
    expect(error).toBeInstanceOf(ConvoBridgeError);
    expect(error.name).toBe('PlatformError');
    expect(error.message).toBe(
      'platform addNote (POST /v1/note) failed [AUTH, HTTP 200, rc 401]: platform said "Data tidak valid"; ' +
        'check the client auth scheme, businessId and secret against the dashboard settings',
    );
  });

  it.each([
    ['RATE_LIMITED', true],
    ['SERVER', true],
    ['NETWORK', true],
    ['TIMEOUT', true],
    ['AUTH', false],
    ['PERMISSION', false],
    ['NOT_FOUND', false],
    ['VALIDATION', false],
    ['OUTCOME_UNKNOWN', false],
    ['CONTRACT', false],
  ] as const)('%s retryable: %s', (code, retryable) => {
    expect(new PlatformError(details({ code })).retryable).toBe(retryable);
  });

  it('states the wait of a rate limit and the number of attempts', () => {
    const error = new PlatformError(
      details({
        code: 'RATE_LIMITED',
        statusCode: 429,
        rc: null,
        platformMessage: null,
        retryAfterMs: 120_000,
        attempts: 2,
      }),
    );
    expect(error.message).toBe(
      'platform addNote (POST /v1/note) failed [RATE_LIMITED, HTTP 429, 2 attempts]; slow down: the platform asked to wait 120 s',
    );
  });

  it('keeps the cause', () => {
    const cause = new Error('socket hang up');
    expect(new PlatformError(details({ code: 'OUTCOME_UNKNOWN', cause })).cause).toBe(cause);
  });
});

describe('isPlatformError', () => {
  const error = new PlatformError(details({ code: 'NOT_FOUND' }));
  it.each([
    [error, undefined, true],
    [error, 'NOT_FOUND', true],
    [error, 'AUTH', false],
    [new Error('x'), undefined, false],
    [new ConvoBridgeError('x', { code: 'AUTH' }), undefined, false],
    [{ name: 'PlatformError', code: 'AUTH' }, undefined, false],
    [null, undefined, false],
  ] as const)('%s, %s -> %s', (value, code, expected) => {
    expect(isPlatformError(value, code)).toBe(expected);
  });

  it('recognises one from a duplicated module by its shape', () => {
    const foreign = Object.assign(new Error('x'), { name: 'PlatformError', code: 'TIMEOUT' });
    expect(isPlatformError(foreign, 'TIMEOUT')).toBe(true);
    expect(isPlatformError(Object.assign(new Error('x'), { name: 'PlatformError', code: 'NOPE' }))).toBe(
      false,
    );
  });
});
