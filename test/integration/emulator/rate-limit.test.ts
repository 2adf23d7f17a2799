import { afterEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { authHeaders, call, startTestEmulator } from './emulator-test-kit.js';

const TOO_MANY = 'Too many requests, please try again later';

describe('rate limits (real HTTP)', () => {
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  /** A clock the test moves by hand, so windows pass without waiting. */
  const clock = () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('earlier form: the authenticated limit answers 429 with the too-many text and Retry-After, then lets the caller in again', async () => {
    const time = clock();
    emulator = await startTestEmulator({
      form: 'earlier',
      rateLimit: { authenticated: 5, unauthenticated: 2, windowMs: 10_000 },
      now: time.now,
    });
    const total = () =>
      call((emulator as EmulatorHandle).url, 'GET', '/v1/conversation/need-human/total', {
        headers: authHeaders('earlier'),
      });
    for (let i = 0; i < 5; i += 1) {
      time.advance(1000);
      expect((await total()).status).toBe(200);
    }
    const limited = await total();
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ status: 0, rc: 429, error_msg: TOO_MANY });
    // The oldest request (t=1s) leaves the 10 s window at t=11s; now is t=5s.
    expect(limited.headers.get('retry-after')).toBe('6');
    time.advance(6000);
    expect((await total()).status).toBe(200);
  });

  it('earlier form: unauthenticated callers get the smaller limit, and it does not eat into the authenticated one', async () => {
    const time = clock();
    emulator = await startTestEmulator({
      form: 'earlier',
      rateLimit: { authenticated: 5, unauthenticated: 2, windowMs: 60_000 },
      now: time.now,
    });
    const url = emulator.url;
    const anonymous = () =>
      call(url, 'GET', '/v1/conversation/need-human/total', { headers: { Authorization: 'Bearer wrong' } });
    expect((await anonymous()).status).toBe(401);
    expect((await anonymous()).status).toBe(401);
    const third = await anonymous();
    expect(third.status).toBe(429);
    expect(third.json.error_msg).toBe(TOO_MANY);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const authed = await call(url, 'GET', '/v1/conversation/need-human/total', {
      headers: authHeaders('earlier'),
    });
    expect(authed.status).toBe(200);
  });

  it('earlier form defaults to 100 authenticated and 10 unauthenticated requests per minute', async () => {
    emulator = await startTestEmulator({ form: 'earlier' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await call(emulator.url, 'GET', '/version')).status);
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    expect(emulator.admin.summary().rateLimit).toEqual({
      authenticated: 100,
      unauthenticated: 10,
      windowMs: 60_000,
    });
  });

  it('current form has no limit by default', async () => {
    emulator = await startTestEmulator({ form: 'current' });
    for (let i = 0; i < 120; i += 1) {
      const result = await call(emulator.url, 'GET', '/v1/conversation/need-human/total', {
        headers: authHeaders('current'),
      });
      expect(result.json.status).toBe(1);
    }
  });

  it('current form limits when asked, answering HTTP 200 with rc 429 and Retry-After', async () => {
    emulator = await startTestEmulator({
      form: 'current',
      rateLimit: { authenticated: 3, unauthenticated: 1, windowMs: 60_000 },
    });
    const total = () =>
      call((emulator as EmulatorHandle).url, 'GET', '/v1/conversation/need-human/total', {
        headers: authHeaders('current'),
      });
    for (let i = 0; i < 3; i += 1) expect((await total()).json.status).toBe(1);
    const limited = await total();
    expect(limited.status).toBe(200);
    expect(limited.json).toEqual({ status: 0, rc: 429, error_msg: TOO_MANY });
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('never limits the health check', async () => {
    emulator = await startTestEmulator({
      form: 'earlier',
      rateLimit: { authenticated: 1, unauthenticated: 1, windowMs: 60_000 },
    });
    for (let i = 0; i < 5; i += 1) expect((await call(emulator.url, 'GET', '/health')).status).toBe(200);
  });
});
