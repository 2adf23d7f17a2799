import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { AUTH_TEXT, BUSINESS_ID, call, SECRET, startTestEmulator } from './emulator-test-kit.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const NOTE = { conversation_id: 'conv-1', note: 'auth check' };

describe('authentication (real HTTP)', () => {
  let current: EmulatorHandle;
  let earlier: EmulatorHandle;

  beforeAll(async () => {
    current = await startTestEmulator({ form: 'current' });
    earlier = await startTestEmulator({ form: 'earlier', rateLimit: false });
    for (const emulator of [current, earlier]) emulator.admin.createConversation({ id: 'conv-1' });
  });
  afterAll(async () => {
    await current.close();
    await earlier.close();
  });

  describe('current form', () => {
    it.each([
      ['Business + Secret headers', { Business: BUSINESS_ID, Secret: SECRET }, 'business-headers'],
      ['encoded bearer', { Authorization: `Bearer ${b64(`${BUSINESS_ID}:${SECRET}`)}` }, 'encoded-bearer'],
      [
        'encoded bearer, lower-case scheme',
        { Authorization: `bearer ${b64(`${BUSINESS_ID}:${SECRET}`)}` },
        'encoded-bearer',
      ],
    ])('accepts %s', async (_case, headers, scheme) => {
      const result = await call(current.url, 'POST', '/v1/note', { headers, body: NOTE });
      expect(result.json).toEqual({ message_id: expect.any(String), success: true });
      expect(current.admin.requests(1)[0]?.auth).toBe(scheme);
    });

    it.each([
      ['no credentials at all', {}],
      ['only the Business header', { Business: BUSINESS_ID }],
      ['only the Secret header', { Secret: SECRET }],
      ['a wrong Secret', { Business: BUSINESS_ID, Secret: 'wrong' }],
      ['a wrong Business id', { Business: 'biz-2', Secret: SECRET }],
      ['Bearer without a space', { Authorization: `Bearer${b64(`${BUSINESS_ID}:${SECRET}`)}` }],
      ['Bearer with no token', { Authorization: 'Bearer ' }],
      ['an encoded bearer with a wrong business id', { Authorization: `Bearer ${b64(`biz-2:${SECRET}`)}` }],
      ['an encoded bearer with a wrong secret', { Authorization: `Bearer ${b64(`${BUSINESS_ID}:nope`)}` }],
      [
        'an encoded bearer joined with a pipe (the WhatsApp proxy scheme)',
        { Authorization: `Bearer ${b64(`${BUSINESS_ID}|${SECRET}`)}` },
      ],
      ['the earlier form plain bearer', { Authorization: `Bearer ${SECRET}` }],
      ['a Basic scheme', { Authorization: `Basic ${b64(`${BUSINESS_ID}:${SECRET}`)}` }],
    ])('rejects %s with HTTP 200, status 0, rc 401 and the invalid-data text', async (_case, headers) => {
      const before = current.admin.conversation('conv-1').notes.length;
      const result = await call(current.url, 'POST', '/v1/note', { headers, body: NOTE });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
      expect(current.admin.conversation('conv-1').notes).toHaveLength(before);
    });

    it('checks credentials on every operation', async () => {
      for (const [method, path] of [
        ['POST', '/v1/message'],
        ['GET', '/v1/message/conv-1'],
        ['POST', '/v1/note'],
        ['POST', '/v1/conversation/need-human'],
        ['GET', '/v1/conversation/need-human/total'],
      ] as const) {
        const result = await call(current.url, method, path, method === 'POST' ? { body: NOTE } : {});
        expect(result.json, `${method} ${path}`).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
      }
    });

    it('never writes the secret into the request log', async () => {
      await call(current.url, 'POST', '/v1/note', {
        headers: { Business: BUSINESS_ID, Secret: 'wrong' },
        body: NOTE,
      });
      expect(JSON.stringify(current.admin.requests())).not.toContain(SECRET);
    });
  });

  describe('earlier form', () => {
    it('accepts Authorization: Bearer <secret>', async () => {
      const result = await call(earlier.url, 'POST', '/v1/note', {
        headers: { Authorization: `Bearer ${SECRET}` },
        body: NOTE,
      });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 1, message: 'Sukses' });
    });

    it.each([
      ['no Authorization header', {}],
      ['a wrong secret', { Authorization: 'Bearer wrong' }],
      ['Bearer without a space', { Authorization: `Bearer${SECRET}` }],
      ['the secret without a scheme', { Authorization: SECRET }],
      ['the current form encoded bearer', { Authorization: `Bearer ${b64(`${BUSINESS_ID}:${SECRET}`)}` }],
      ['the current form Business + Secret headers', { Business: BUSINESS_ID, Secret: SECRET }],
      ['merchant headers outside the history call', { merchant_id: BUSINESS_ID, secret_key: SECRET }],
    ])('rejects %s with HTTP 401 and the invalid-data text', async (_case, headers) => {
      const result = await call(earlier.url, 'POST', '/v1/note', { headers, body: NOTE });
      expect(result.status).toBe(401);
      expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    });

    it.each([
      ['merchant_id + secret_key', { merchant_id: BUSINESS_ID, secret_key: SECRET }, 200],
      ['merchant_id with a wrong secret_key', { merchant_id: BUSINESS_ID, secret_key: 'no' }, 401],
      ['a wrong merchant_id', { merchant_id: 'biz-2', secret_key: SECRET }, 401],
      ['secret_key alone', { secret_key: SECRET }, 401],
    ])('on the history call, %s answers HTTP %i', async (_case, headers, status) => {
      const result = await call(earlier.url, 'GET', '/v1/message/conv-1', { headers });
      expect(result.status).toBe(status);
      if (status === 401) expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    });
  });

  describe('auth storm', () => {
    it('answers 401 to valid credentials until it is turned off, then accepts them again', async () => {
      const headers = { Business: BUSINESS_ID, Secret: SECRET };
      const storm = await call(current.url, 'PUT', '/_emulator/auth-storm', { body: { active: true } });
      expect(storm.json).toEqual({ authStorm: true });
      for (let i = 0; i < 3; i += 1) {
        const result = await call(current.url, 'GET', '/v1/conversation/need-human/total', { headers });
        expect(result.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
      }
      // The request log says whose credentials were refused (never the secret): the rotated-away
      // ones, which a client that was not told still sends, apart from plain wrong ones.
      await call(current.url, 'GET', '/v1/conversation/need-human/total', {
        headers: { Business: BUSINESS_ID, Secret: 'wrong' },
      });
      expect(current.admin.requests(4).map((r) => [r.credential, r.httpStatus, r.rc])).toEqual([
        ['rotated', 200, 401],
        ['rotated', 200, 401],
        ['rotated', 200, 401],
        ['invalid', 200, 401],
      ]);
      await call(current.url, 'PUT', '/_emulator/auth-storm', { body: { active: false } });
      const after = await call(current.url, 'GET', '/v1/conversation/need-human/total', { headers });
      expect(after.json).toMatchObject({ status: 1, data: { total: expect.any(Number) } });
      expect(current.admin.requests(1)[0]?.credential).toBe('current');
      expect(JSON.stringify(current.admin.requests())).not.toContain(SECRET);
    });
  });
});
