import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { AUTH_TEXT, authHeaders, call, platform, startTestEmulator } from './emulator-test-kit.js';

const WIB = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('platform API, current form (real HTTP)', () => {
  let emulator: EmulatorHandle;
  let api: ReturnType<typeof platform>;

  beforeAll(async () => {
    emulator = await startTestEmulator({ form: 'current' });
    api = platform(emulator);
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    await emulator.admin.reset({ empty: true });
    emulator.admin.createConversation({ id: 'conv-1', label: 'Budi', channel: { type: 'whatsapp_qr' } });
    emulator.admin.customerMessage('conv-1', { text: 'Halo, pesanan saya di mana?' });
  });

  describe('POST /v1/message', () => {
    it('accepts text and answers {conversation_id, success: true}', async () => {
      const result = await api.send({ conversation_id: 'conv-1', text: 'Sedang dikirim, Kak.' });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ conversation_id: 'conv-1', success: true });
      const last = emulator.admin.conversation('conv-1').messages.at(-1);
      expect(last).toMatchObject({
        origin: 'api',
        sender: 'agent',
        senderName: 'Toko Emulator',
        text: 'Sedang dikirim, Kak.',
        deliveryStatus: 'delivered',
      });
    });

    it('sends media and ignores text when media is present', async () => {
      const result = await api.send({
        conversation_id: 'conv-1',
        text: 'ignored',
        media: {
          url: 'https://files.example/invoice.png',
          type: 'image',
          mime_type: 'image/png',
          caption: 'Invoice',
        },
      });
      expect(result.json).toEqual({ conversation_id: 'conv-1', success: true });
      const history = await api.history('conv-1');
      expect(history.json.data.list.at(-1)).toMatchObject({
        message: 'https://files.example/invoice.png',
        message_type: 'image',
        mime_type: 'image/png',
        caption: 'Invoice',
      });
    });

    it('keeps reply_to_message_id and shows it in the history', async () => {
      const first = (await api.history('conv-1')).json.data.list[0];
      await api.send({
        conversation_id: 'conv-1',
        text: 'Ini jawabannya',
        reply_to_message_id: first.message_id,
      });
      const list = (await api.history('conv-1')).json.data.list;
      expect(list.at(-1).reply_to_message_id).toBe(first.message_id);
      expect(list[0]).not.toHaveProperty('reply_to_message_id');
    });

    it.each([
      ['no conversation_id', { text: 'hi' }, 'conversation_id is required'],
      ['empty conversation_id', { conversation_id: '  ', text: 'hi' }, 'conversation_id is required'],
      ['numeric conversation_id', { conversation_id: 12, text: 'hi' }, 'conversation_id is required'],
      ['neither text nor media', { conversation_id: 'conv-1' }, 'text or media is required'],
      ['blank text', { conversation_id: 'conv-1', text: '   ' }, 'text or media is required'],
      [
        'unknown media type',
        { conversation_id: 'conv-1', media: { url: 'https://f.example/a', type: 'sticker' } },
        'media type not supported',
      ],
      [
        'unsupported mime_type',
        {
          conversation_id: 'conv-1',
          media: { url: 'https://f.example/a.gif', type: 'image', mime_type: 'image/gif' },
        },
        'media mime type not supported',
      ],
      [
        'media without url',
        { conversation_id: 'conv-1', media: { type: 'image' } },
        'media url is required and must be an https address',
      ],
      ['unknown conversation', { conversation_id: 'nope', text: 'hi' }, 'conversation not found'],
    ])('rejects %s with HTTP 200 and that error_msg', async (_case, body, errorMsg) => {
      const result = await api.send(body);
      expect(result.status).toBe(200);
      expect(result.json.status).toBe(0);
      expect(result.json.error_msg).toBe(errorMsg);
      expect(result.json.rc).toBe(errorMsg === 'conversation not found' ? 404 : 400);
      expect(emulator.admin.conversation('conv-1').messageCount).toBe(1);
    });

    it.each([
      ['a JSON array', '[]', 'application/json'],
      ['broken JSON', '{"conversation_id":', 'application/json'],
      ['a form body', 'conversation_id=conv-1&text=hi', 'application/x-www-form-urlencoded'],
    ])('answers rc 400 with the invalid-data text for %s', async (_case, rawBody, type) => {
      const result = await call(emulator.url, 'POST', '/v1/message', {
        headers: { ...authHeaders('current'), 'content-type': type },
        rawBody,
      });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 0, rc: 400, error_msg: AUTH_TEXT });
    });
  });

  describe('GET /v1/message/{conversation_id}', () => {
    it('lists messages oldest first with every current-form field', async () => {
      await api.send({ conversation_id: 'conv-1', text: 'Balasan' });
      const result = await api.history('conv-1');
      expect(result.status).toBe(200);
      expect(result.json).toMatchObject({ status: 1, rc: 200, message: 'list message' });
      expect(Math.abs(result.json.ts - Date.now() / 1000)).toBeLessThan(5);
      const list = result.json.data.list;
      expect(list).toHaveLength(2);
      expect(list[0].id).toBeLessThan(list[1].id);
      expect(result.json.data.last_id).toBe(list[1].id);
      expect(Object.keys(list[0]).sort()).toEqual(
        [
          'caption',
          'conversation_id',
          'delivery_status',
          'id',
          'message',
          'message_id',
          'message_type',
          'mime_type',
          'sender',
          'sender_name',
          'sent_at',
        ].sort(),
      );
      expect(list[0]).toMatchObject({
        sender: 'user',
        sender_name: 'Budi',
        message_type: 'text',
        mime_type: 'text/plain',
      });
      expect(list[0].sent_at).toMatch(WIB);
      expect(list[1]).toMatchObject({ sender: 'agent', message: 'Balasan' });
    });

    it('pages with limit and last_id, and answers null and last_id 0 when nothing is new', async () => {
      for (const text of ['a', 'b', 'c', 'd']) await api.send({ conversation_id: 'conv-1', text });
      const first = await api.history('conv-1', '?limit=2');
      expect(first.json.data.list.map((m: { message: string }) => m.message)).toEqual([
        'Halo, pesanan saya di mana?',
        'a',
      ]);
      const second = await api.history('conv-1', `?limit=2&last_id=${first.json.data.last_id}`);
      expect(second.json.data.list.map((m: { message: string }) => m.message)).toEqual(['b', 'c']);
      const third = await api.history('conv-1', `?limit=0&last_id=${second.json.data.last_id}`);
      expect(third.json.data.list.map((m: { message: string }) => m.message)).toEqual(['d']);
      const none = await api.history('conv-1', `?last_id=${third.json.data.last_id}`);
      expect(none.json.data).toEqual({ list: null, last_id: 0 });
      const all = await api.history('conv-1', '?limit=&last_id=');
      expect(all.json.data.list).toHaveLength(5);
    });

    it('answers an unknown conversation with an empty list, not an error', async () => {
      const result = await api.history('who-is-this');
      expect(result.json).toMatchObject({ status: 1, rc: 200, data: { list: null, last_id: 0 } });
    });

    it('lists notes among the messages with sender name api and no marker', async () => {
      await api.note({ conversation_id: 'conv-1', note: 'Pelanggan VIP' });
      const note = (await api.history('conv-1')).json.data.list.at(-1);
      expect(note).toMatchObject({ sender_name: 'api', message: 'Pelanggan VIP', message_type: 'text' });
      expect(note).not.toHaveProperty('is_note');
    });

    it.each([['?limit=abc'], ['?limit=-1'], ['?last_id=1.5'], ['?limit=1&limit=2']])(
      'answers rc 400 with the invalid-data text for %s',
      async (query) => {
        const result = await api.history('conv-1', query);
        expect(result.status).toBe(200);
        expect(result.json).toEqual({ status: 0, rc: 400, error_msg: AUTH_TEXT });
      },
    );
  });

  describe('POST /v1/note', () => {
    it('adds a note and answers {message_id, success: true}', async () => {
      const result = await api.note({ conversation_id: 'conv-1', note: 'Sudah dicek gudang' });
      expect(result.json).toEqual({ message_id: expect.any(String), success: true });
      const detail = emulator.admin.conversation('conv-1');
      expect(detail.notes).toHaveLength(1);
      expect(detail.notes[0]).toMatchObject({
        messageId: result.json.message_id,
        senderName: 'api',
        isNote: true,
      });
    });

    it.each([
      ['missing conversation_id', { note: 'x' }, 400, 'conversation_id is required'],
      ['empty conversation_id', { conversation_id: '', note: 'x' }, 400, 'conversation_id is required'],
      ['missing note', { conversation_id: 'conv-1' }, 400, 'note is required'],
      ['empty note', { conversation_id: 'conv-1', note: ' ' }, 400, 'note is required'],
      ['unknown conversation', { conversation_id: 'nope', note: 'x' }, 404, 'conversation not found'],
    ])('rejects %s with the exact error text', async (_case, body, rc, errorMsg) => {
      const result = await api.note(body);
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 0, rc, error_msg: errorMsg });
    });
  });

  describe('POST /v1/conversation/need-human and GET .../total', () => {
    it('marks the conversation, moves it to Butuh CS, and succeeds again when repeated', async () => {
      const first = await api.needHuman({ conversation_id: 'conv-1' });
      expect(first.json).toEqual({ success: true, conversation_id: 'conv-1' });
      const again = await api.needHuman({ conversation_id: 'conv-1' });
      expect(again.json).toEqual({ success: true, conversation_id: 'conv-1' });
      expect(emulator.admin.conversation('conv-1')).toMatchObject({
        status: 'Butuh CS',
        needHuman: true,
        mode: 'human',
      });
      const total = await api.total();
      expect(total.json).toEqual({ status: 1, message: 'Sukses', data: { total: 1 } });
    });

    it('counts every marked conversation', async () => {
      emulator.admin.createConversation({ id: 'conv-2' });
      emulator.admin.createConversation({ id: 'conv-3' });
      await api.needHuman({ conversation_id: 'conv-1' });
      await api.needHuman({ conversation_id: 'conv-3' });
      expect((await api.total()).json.data.total).toBe(2);
    });

    it.each([
      ['missing conversation_id', {}, 400, 'conversation_id is required'],
      ['unknown conversation', { conversation_id: 'nope' }, 404, 'conversation not found'],
    ])('rejects %s', async (_case, body, rc, errorMsg) => {
      const result = await api.needHuman(body);
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 0, rc, error_msg: errorMsg });
    });
  });

  it('GET /version answers {"version":"1.3"} and GET /health answers healthy, both without credentials', async () => {
    expect((await call(emulator.url, 'GET', '/version')).json).toEqual({ version: '1.3' });
    const health = await call(emulator.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 1, message: 'Sukses', data: { healthy: true } });
  });

  it('answers an unknown route with HTTP 404', async () => {
    const result = await call(emulator.url, 'GET', '/v2/message/conv-1', { headers: authHeaders('current') });
    expect(result.status).toBe(404);
    expect(result.json).toEqual({
      status: 0,
      rc: 404,
      error_msg: 'unknown operation: GET /v2/message/conv-1',
    });
  });
});
