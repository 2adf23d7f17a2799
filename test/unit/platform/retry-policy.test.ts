import { describe, expect, it } from 'vitest';
import type { RetrySettings } from '../../../src/platform/client-options.js';
import { backoffDelay, decideRetry, parseRetryAfter } from '../../../src/platform/retry-policy.js';

const NOW = Date.parse('2026-11-21T00:00:00Z');
const settings: RetrySettings = { retries: 3, minDelayMs: 100, maxDelayMs: 2000, maxRetryAfterMs: 5000 };

describe('parseRetryAfter', () => {
  it.each([
    ['1', 1000],
    ['120', 120_000],
    ['0', 0],
    [' 2 ', 2000],
    ['1.5', 1500],
    ['Sat, 21 Nov 2026 00:00:30 GMT', 30_000],
    ['Fri, 20 Nov 2026 23:00:00 GMT', 0],
    ['99999999', 86_400_000],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([[undefined], [''], ['soon'], ['-1'], ['12abc'], ['1e3']])('gives null for %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeNull();
  });
});

describe('backoffDelay (full jitter)', () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [5, 1600],
    [6, 2000],
    [20, 2000],
  ])('retry %i waits a random time below a ceiling of %i ms', (retry, ceiling) => {
    expect(backoffDelay(retry, settings, () => 0)).toBe(0);
    expect(backoffDelay(retry, settings, () => 0.5)).toBe(Math.floor(ceiling / 2));
    expect(backoffDelay(retry, settings, () => 0.999999)).toBe(ceiling - 1);
  });

  it('stays within [0, ceiling) with the real random source', () => {
    for (let i = 0; i < 200; i += 1) {
      const delay = backoffDelay(3, settings);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(400);
    }
  });
});

describe('decideRetry', () => {
  const half = () => 0.5;
  it.each([
    ['SERVER', null, 1, { retry: true, delayMs: 50 }],
    ['NETWORK', null, 2, { retry: true, delayMs: 100 }],
    ['TIMEOUT', null, 3, { retry: true, delayMs: 200 }],
    ['RATE_LIMITED', null, 1, { retry: true, delayMs: 50 }],
    ['RATE_LIMITED', 1000, 1, { retry: true, delayMs: 1000 }],
    ['RATE_LIMITED', 5000, 1, { retry: true, delayMs: 5000 }],
    ['RATE_LIMITED', 5001, 1, { retry: false }],
    ['RATE_LIMITED', 120_000, 1, { retry: false }],
    ['AUTH', null, 1, { retry: false }],
    ['PERMISSION', null, 1, { retry: false }],
    ['NOT_FOUND', null, 1, { retry: false }],
    ['VALIDATION', null, 1, { retry: false }],
    ['CONTRACT', null, 1, { retry: false }],
    ['OUTCOME_UNKNOWN', null, 1, { retry: false }],
  ] as const)('%s (retryAfter %s) before retry %i -> %j', (code, retryAfterMs, retry, expected) => {
    expect(decideRetry({ code, retryAfterMs }, retry, 3, settings, half)).toEqual(expected);
  });

  it('stops when no retries are left', () => {
    expect(decideRetry({ code: 'SERVER', retryAfterMs: null }, 4, 0, settings, half)).toEqual({
      retry: false,
    });
  });
});
