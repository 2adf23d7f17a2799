import { afterEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { authHeaders, call, platform, startTestEmulator } from './emulator-test-kit.js';

describe('admin API /_emulator (real HTTP)', () => {
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  const form = (path: string, fields: Record<string, string>) =>
    fetch(`${(emulator as EmulatorHandle).adminUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });

  it('summarises the emulator without exposing secrets', async () => {
    emulator = await startTestEmulator({
      seed: 99,
      webhook: { url: 'http://127.0.0.1:1/hook', secret: 'very-secret' },
    });
    const state = await call(emulator.adminUrl, 'GET', '/state');
    expect(state.status).toBe(200);
    expect(state.json).toMatchObject({
      form: 'current',
      business: { id: 'biz-1', name: 'Toko Emulator' },
      conversations: 0,
      needHumanTotal: 0,
      webhook: { url: 'http://127.0.0.1:1/hook', secretSet: true },
      seed: 99,
      authStorm: false,
      rateLimit: null,
    });
    expect(JSON.stringify(state.json)).not.toContain('very-secret');
    expect(JSON.stringify(state.json)).not.toContain('s3cret-key');
  });

  it('logs every platform request with its outcome, newest last, and caps the log', async () => {
    emulator = await startTestEmulator({ requestLogSize: 3 });
    emulator.admin.createConversation({ id: 'c1' });
    const api = platform(emulator);
    await api.note({ conversation_id: 'c1', note: 'satu' });
    await api.note({ conversation_id: 'c1' });
    await call(emulator.url, 'GET', '/v1/message/c1', { headers: { Business: 'biz-1', Secret: 'nope' } });
    await call(emulator.url, 'GET', '/nowhere');
    const log = (await call(emulator.adminUrl, 'GET', '/requests')).json.requests;
    expect(log).toHaveLength(3);
    expect(log.map((r: { seq: number }) => r.seq)).toEqual([2, 3, 4]);
    expect(log[0]).toMatchObject({
      method: 'POST',
      path: '/v1/note',
      endpoint: 'note',
      authenticated: true,
      auth: 'business-headers',
      httpStatus: 200,
      rc: 400,
      errorMsg: 'note is required',
      body: { conversation_id: 'c1' },
    });
    expect(log[1]).toMatchObject({
      endpoint: 'history',
      authenticated: false,
      auth: 'wrong Secret',
      rc: 401,
    });
    expect(log[2]).toMatchObject({ endpoint: null, httpStatus: 404 });
    expect((await call(emulator.adminUrl, 'GET', '/requests?limit=1')).json.requests).toHaveLength(1);
    expect(emulator.admin.summary().requestsSeen).toBe(4);
  });

  it('takes a customer message with media and a chosen time', async () => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'c1', label: 'Budi' });
    const created = await call(emulator.adminUrl, 'POST', '/conversations/c1/customer-message', {
      body: {
        media: { type: 'image', url: 'https://files.example/p.jpg', caption: 'foto' },
        at: '2026-01-05T03:00:00Z',
        senderName: 'Budi S.',
      },
    });
    expect(created.json).toMatchObject({
      type: 'image',
      text: 'https://files.example/p.jpg',
      caption: 'foto',
      sentAt: '2026-01-05 10:00:00',
      senderName: 'Budi S.',
      origin: 'customer',
    });
    const history = (await platform(emulator).history('c1')).json.data.list[0];
    expect(history).toMatchObject({ message_type: 'image', sent_at: '2026-01-05 10:00:00', sender: 'user' });
  });

  it.each([
    ['no text or media', {}, 'a customer message needs text or media'],
    ['an unreadable time', { text: 'x', at: 'kemarin' }, 'cannot read at="kemarin" as a time'],
    ['an unknown key', { text: 'x', when: '1h' }, 'Unrecognized key: "when"'],
    ['a non-http media url', { media: { type: 'image', url: 'javascript:alert(1)' } }, 'media.url'],
  ])('rejects a customer message with %s (400)', async (_case, body, text) => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'c1' });
    const result = await call(emulator.adminUrl, 'POST', '/conversations/c1/customer-message', { body });
    expect(result.status).toBe(400);
    expect(result.json.error.code).toBe('EMULATOR_BAD_REQUEST');
    expect(result.json.error.message).toContain(text);
  });

  it('resets to an empty emulator: conversations, faults, auth storm and logs', async () => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'c1' });
    emulator.admin.addFault({ type: 'error' });
    emulator.admin.setAuthStorm(true);
    await call(emulator.url, 'GET', '/v1/conversation/need-human/total', { headers: authHeaders('current') });
    const reset = await call(emulator.adminUrl, 'POST', '/reset', { body: {} });
    expect(reset.json).toMatchObject({ conversations: 0, faults: [], authStorm: false, requestsLogged: 0 });
    expect((await platform(emulator).total()).json).toEqual({
      status: 1,
      message: 'Sukses',
      data: { total: 0 },
    });
  });

  it('serves the inbox forms: a url-encoded post acts and redirects back with 303', async () => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'c 1' });
    const response = await form('/conversations/c%201/take-over', {
      _redirect: '/_emulator/inbox?c=c%201',
      agentName: 'Rina',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/_emulator/inbox?c=c%201');
    expect(emulator.admin.conversation('c 1')).toMatchObject({ mode: 'human', agentName: 'Rina' });
  });

  it.each([['https://evil.example/'], ['//evil.example/x'], ['/_emulator/state']])(
    'never redirects a form outside the inbox (%s)',
    async (target) => {
      emulator = await startTestEmulator();
      emulator.admin.createConversation({ id: 'c1' });
      const response = await form('/conversations/c1/done', { _redirect: target });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('/_emulator/inbox?c=c1');
    },
  );

  it('answers a failed form with a page that links back to the inbox', async () => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'c1' });
    emulator.admin.block('c1');
    const response = await form('/conversations/c1/ai-reply', {
      _redirect: '/_emulator/inbox?c=c1',
      text: 'x',
    });
    expect(response.status).toBe(409);
    const html = await response.text();
    expect(html).toContain('the AI stays quiet in conversation &quot;c1&quot;: the user is blocked');
    expect(html).toContain('href="/_emulator/inbox?c=c1"');
  });

  it('answers an unknown admin path with 404 JSON', async () => {
    emulator = await startTestEmulator();
    const result = await call(emulator.adminUrl, 'GET', '/nothing-here');
    expect(result.status).toBe(404);
    expect(result.json.error.code).toBe('EMULATOR_NOT_FOUND');
  });

  it('rejects a webhook target that is not http(s)', async () => {
    emulator = await startTestEmulator();
    const result = await call(emulator.adminUrl, 'PUT', '/webhook', {
      body: { url: 'file:///etc/passwd', secret: 'x' },
    });
    expect(result.status).toBe(400);
    expect(emulator.admin.webhook()).toBeNull();
  });
});
