import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { authHeaders, call, platform, startTestEmulator } from './emulator-test-kit.js';

describe('fault injection (real HTTP)', () => {
  const open: EmulatorHandle[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((emulator) => emulator.close()));
  });
  const start = async (options: Parameters<typeof startTestEmulator>[0] = {}) => {
    const emulator = await startTestEmulator(options);
    open.push(emulator);
    emulator.admin.createConversation({ id: 'c1' });
    return emulator;
  };
  const addFault = async (emulator: EmulatorHandle, fault: Record<string, unknown>) => {
    const result = await call(emulator.adminUrl, 'POST', '/faults', { body: fault });
    expect(result.status, JSON.stringify(result.json)).toBe(200);
    return result.json as { id: string };
  };
  const notes = (emulator: EmulatorHandle) => emulator.admin.conversation('c1').notes.length;

  it('fails the fraction the seeded RNG picks, the same requests on every run', async () => {
    const pattern = async () => {
      const emulator = await start({ seed: 1234 });
      await addFault(emulator, { type: 'error', endpoint: 'history', fraction: 0.3 });
      const failed: number[] = [];
      for (let i = 0; i < 40; i += 1) {
        const result = await platform(emulator).history('c1');
        if (result.json.status === 0) failed.push(i);
      }
      return failed;
    };
    const first = await pattern();
    const second = await pattern();
    const random = createSeededRandom(1234);
    const expected = Array.from({ length: 40 }, (_, i) => i).filter(() => random() < 0.3);
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
    expect(first.length).toBeGreaterThan(5);
    expect(first.length).toBeLessThan(25);
  });

  it('reseeding restarts the sequence', async () => {
    const emulator = await start({ seed: 7 });
    await addFault(emulator, { type: 'error', endpoint: 'history', fraction: 0.5 });
    const run = async () => {
      const out: number[] = [];
      for (let i = 0; i < 12; i += 1) out.push((await platform(emulator).history('c1')).json.status);
      return out;
    };
    const first = await run();
    await call(emulator.adminUrl, 'PUT', '/random-seed', { body: { seed: 7 } });
    expect(await run()).toEqual(first);
  });

  it('before mode: a 5xx without acting (current form: HTTP 200, rc 500)', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'error', endpoint: 'note', mode: 'before', status: 503 });
    const result = await platform(emulator).note({ conversation_id: 'c1', note: 'x' });
    expect(result.status).toBe(200);
    expect(result.json).toEqual({ status: 0, rc: 503, error_msg: 'error create note' });
    expect(notes(emulator)).toBe(0);
  });

  it('after mode: acts, then answers 5xx (the request was taken)', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'error', endpoint: 'send', mode: 'after' });
    const result = await platform(emulator).send({ conversation_id: 'c1', text: 'terkirim tapi 500' });
    expect(result.json).toEqual({ status: 0, rc: 500, error_msg: 'internal server error' });
    expect(emulator.admin.conversation('c1').messages.at(-1)?.text).toBe('terkirim tapi 500');
  });

  it('delivery "http" sends the real HTTP status even in the current form', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'error', endpoint: 'needHuman', status: 502, delivery: 'http' });
    const result = await platform(emulator).needHuman({ conversation_id: 'c1' });
    expect(result.status).toBe(502);
    expect(result.json).toEqual({ status: 0, rc: 502, error_msg: 'error update lock by human' });
  });

  it('earlier form: an error fault is an HTTP 500', async () => {
    const emulator = await start({ form: 'earlier', rateLimit: false });
    await addFault(emulator, { type: 'error', endpoint: 'needHumanTotal' });
    const result = await platform(emulator).total();
    expect(result.status).toBe(500);
    expect(result.json).toEqual({ status: 0, rc: 500, error_msg: 'error count conversation' });
  });

  it('rate_limit: 429 with the configured Retry-After', async () => {
    const emulator = await start({ form: 'earlier', rateLimit: false });
    await addFault(emulator, { type: 'rate_limit', retryAfterSeconds: 7 });
    const result = await platform(emulator).history('c1');
    expect(result.status).toBe(429);
    expect(result.headers.get('retry-after')).toBe('7');
    expect(result.json).toEqual({
      status: 0,
      rc: 429,
      error_msg: 'Too many requests, please try again later',
    });
  });

  it('latency before: the answer comes late but correct', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'latency', latencyMs: 150, endpoint: 'note' });
    const started = Date.now();
    const result = await platform(emulator).note({ conversation_id: 'c1', note: 'lambat' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(result.json.success).toBe(true);
  });

  it('latency after: the note is stored although the caller timed out', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'latency', latencyMs: 400, mode: 'after', endpoint: 'note' });
    const attempt = fetch(`${emulator.url}/v1/note`, {
      method: 'POST',
      headers: { ...authHeaders('current'), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: 'c1', note: 'timeout setelah simpan' }),
      signal: AbortSignal.timeout(100),
    });
    await expect(attempt).rejects.toThrow();
    expect(notes(emulator)).toBe(1);
    // The request log says the platform acted while its caller was gone (recorded when the
    // answer was ready, after the latency).
    const logged = await waitFor(() => emulator.admin.requests(1)[0], {
      timeoutMs: 5_000,
      what: 'the log entry',
    });
    expect(logged).toMatchObject({ endpoint: 'note', httpStatus: 200, callerGone: true });
    await platform(emulator).note({ conversation_id: 'c1', note: 'ditunggu' });
    expect(emulator.admin.requests(1)[0]).toMatchObject({ endpoint: 'note', callerGone: false });
  });

  it.each([
    ['before', 0],
    ['after', 1],
  ])('drop %s: the socket is destroyed with no answer (%i notes stored)', async (mode, stored) => {
    const emulator = await start();
    await addFault(emulator, { type: 'drop', endpoint: 'note', mode });
    await expect(platform(emulator).note({ conversation_id: 'c1', note: 'hilang' })).rejects.toThrow(
      'fetch failed',
    );
    expect(notes(emulator)).toBe(stored);
    const logged = emulator.admin.requests(1)[0];
    expect(logged).toMatchObject({ endpoint: 'note', httpStatus: null });
    expect(logged?.faults).toHaveLength(1);
  });

  it('applies a fault to its endpoint only; "all" spares the health check; times removes it after firing', async () => {
    const emulator = await start();
    await addFault(emulator, { type: 'error', endpoint: 'note' });
    expect((await platform(emulator).history('c1')).json.status).toBe(1);
    await call(emulator.adminUrl, 'DELETE', '/faults');
    await addFault(emulator, { type: 'error', times: 2 });
    expect((await call(emulator.url, 'GET', '/health')).json.status).toBe(1);
    expect((await platform(emulator).total()).json.rc).toBe(500);
    expect((await platform(emulator).history('c1')).json.rc).toBe(500);
    expect((await platform(emulator).total()).json.status).toBe(1);
    expect((await call(emulator.adminUrl, 'GET', '/faults')).json.faults).toEqual([]);
  });

  it('removes one fault by id', async () => {
    const emulator = await start();
    const fault = await addFault(emulator, { type: 'error' });
    const removed = await call(emulator.adminUrl, 'DELETE', `/faults/${fault.id}`);
    expect(removed.json.faults).toEqual([]);
    expect((await platform(emulator).total()).json.status).toBe(1);
    expect((await call(emulator.adminUrl, 'DELETE', `/faults/${fault.id}`)).status).toBe(404);
  });

  it.each([
    ['an unknown type', { type: 'explode' }],
    ['a fraction above 1', { type: 'error', fraction: 1.5 }],
    ['a 4xx status for an error', { type: 'error', status: 404 }],
    ['latency without latencyMs', { type: 'latency' }],
    ['an unknown endpoint', { type: 'drop', endpoint: 'v2' }],
    ['an unknown mode', { type: 'drop', mode: 'during' }],
    ['an unknown key', { type: 'drop', percent: 5 }],
  ])('rejects a fault with %s (400, names the field)', async (_case, fault) => {
    const emulator = await start();
    const result = await call(emulator.adminUrl, 'POST', '/faults', { body: fault });
    expect(result.status).toBe(400);
    expect(result.json.error.code).toBe('EMULATOR_BAD_REQUEST');
    expect(result.json.error.message).toMatch(/^invalid body for POST \/_emulator\/faults: /);
    expect(emulator.admin.faults()).toEqual([]);
  });
});
