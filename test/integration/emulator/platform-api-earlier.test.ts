import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import {
  AUTH_TEXT,
  authHeaders,
  BUSINESS_ID,
  call,
  platform,
  SECRET,
  startTestEmulator,
} from './emulator-test-kit.js';

describe('platform API, earlier form (real HTTP)', () => {
  let emulator: EmulatorHandle;
  let api: ReturnType<typeof platform>;

  beforeAll(async () => {
    // Rate limits have their own test file; keep them out of the way here.
    emulator = await startTestEmulator({ form: 'earlier', rateLimit: false });
    api = platform(emulator);
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    await emulator.admin.reset({ empty: true });
    emulator.admin.createConversation({ id: 'conv-1', label: 'Sari', channel: { type: 'telegram' } });
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
  });

  describe('POST /v1/message', () => {
    it('accepts text and answers {status: 1, message}', async () => {
      const result = await api.send({ conversation_id: 'conv-1', text: 'Halo juga' });
      expect(result.status).toBe(200);
      expect(result.json).toEqual({ status: 1, message: 'Sukses' });
      expect(emulator.admin.conversation('conv-1').messages.at(-1)?.text).toBe('Halo juga');
    });

    it('accepts media with a free `mimetype` and null media', async () => {
      const media = await api.send({
        conversation_id: 'conv-1',
        text: 'Brosur',
        media: { url: 'https://files.example/b.pdf', type: 'document', mimetype: 'application/msword' },
      });
      expect(media.json).toEqual({ status: 1, message: 'Sukses' });
      const stored = emulator.admin.conversation('conv-1').messages.at(-1);
      expect(stored).toMatchObject({ type: 'document', mimeType: 'application/msword', caption: 'Brosur' });
      const nullMedia = await api.send({ conversation_id: 'conv-1', text: 'Tanpa lampiran', media: null });
      expect(nullMedia.json).toEqual({ status: 1, message: 'Sukses' });
    });

    it.each([
      ['no conversation_id', { text: 'hi' }, 'conversation_id is required'],
      ['no text (required in the earlier form)', { conversation_id: 'conv-1' }, AUTH_TEXT],
      [
        'media without text',
        { conversation_id: 'conv-1', media: { url: 'https://f.example/a.png', type: 'image' } },
        AUTH_TEXT,
      ],
      [
        'unknown media type',
        { conversation_id: 'conv-1', text: 'x', media: { url: 'https://f.example/a', type: 'gif' } },
        'media type not supported',
      ],
      ['unknown conversation', { conversation_id: 'nope', text: 'hi' }, 'conversation not found'],
    ])('rejects %s with HTTP 400', async (_case, body, errorMsg) => {
      const result = await api.send(body);
      expect(result.status).toBe(400);
      expect(result.json).toEqual({ status: 0, rc: 400, error_msg: errorMsg });
    });
  });

  describe('GET /v1/message/{conversation_id}', () => {
    it('returns every message as a plain array in the earlier-form shape, ignoring limit and last_id', async () => {
      await api.send({ conversation_id: 'conv-1', text: 'Balasan' });
      await api.note({ conversation_id: 'conv-1', note: 'Catatan' });
      const result = await api.history('conv-1', '?limit=1&last_id=999');
      expect(result.status).toBe(200);
      expect(result.json.status).toBe(1);
      expect(result.json.message).toBe('list message');
      const data = result.json.data;
      expect(Array.isArray(data)).toBe(true);
      expect(data).toHaveLength(3);
      expect(Object.keys(data[0]).sort()).toEqual(
        [
          'conversation_id',
          'id',
          'is_note',
          'lock_by_human',
          'message',
          'message_id',
          'message_type',
          'metadata',
          'mime_type',
          'sender',
          'sent_at',
        ].sort(),
      );
      expect(data.map((m: { is_note: number }) => m.is_note)).toEqual([0, 0, 1]);
      expect(JSON.parse(data[2].metadata)).toMatchObject({ sender_name: 'api' });
      expect(data.every((m: { lock_by_human: number }) => m.lock_by_human === 0)).toBe(true);
    });

    it('sets lock_by_human to 1 once the conversation is marked as needing a human', async () => {
      await api.needHuman({ conversation_id: 'conv-1' });
      const data = (await api.history('conv-1')).json.data;
      expect(data.every((m: { lock_by_human: number }) => m.lock_by_human === 1)).toBe(true);
    });

    it('answers an unknown conversation with an empty array', async () => {
      const result = await api.history('nope');
      expect(result.json).toEqual({ status: 1, message: 'list message', data: [] });
    });

    it('accepts merchant_id and secret_key headers on the history call only', async () => {
      const headers = { merchant_id: BUSINESS_ID, secret_key: SECRET };
      const history = await call(emulator.url, 'GET', '/v1/message/conv-1', { headers });
      expect(history.status).toBe(200);
      expect(history.json.data).toHaveLength(1);
      const note = await call(emulator.url, 'POST', '/v1/note', {
        headers,
        body: { conversation_id: 'conv-1', note: 'x' },
      });
      expect(note.status).toBe(401);
      expect(note.json).toEqual({ status: 0, rc: 401, error_msg: AUTH_TEXT });
    });
  });

  describe('POST /v1/note', () => {
    it('adds a note and answers {status: 1, message}', async () => {
      const result = await api.note({ conversation_id: 'conv-1', note: 'VIP' });
      expect(result.json).toEqual({ status: 1, message: 'Sukses' });
      expect(emulator.admin.conversation('conv-1').notes).toHaveLength(1);
    });

    it.each([
      ['missing conversation_id', { note: 'x' }, 400, 'conversation_id is required'],
      ['missing note', { conversation_id: 'conv-1' }, 400, 'note is required'],
      ['unknown conversation', { conversation_id: 'nope', note: 'x' }, 404, 'conversation not found'],
    ])('rejects %s with the HTTP status equal to rc', async (_case, body, rc, errorMsg) => {
      const result = await api.note(body);
      expect(result.status).toBe(rc);
      expect(result.json).toEqual({ status: 0, rc, error_msg: errorMsg });
    });
  });

  describe('need-human', () => {
    it('marks the conversation idempotently and counts it', async () => {
      expect((await api.needHuman({ conversation_id: 'conv-1' })).json).toEqual({
        status: 1,
        message: 'Sukses',
      });
      expect((await api.needHuman({ conversation_id: 'conv-1' })).json).toEqual({
        status: 1,
        message: 'Sukses',
      });
      expect((await api.total()).json).toEqual({ status: 1, message: 'Sukses', data: { total: 1 } });
    });

    it.each([
      ['missing conversation_id', {}, 400, 'conversation_id is required'],
      ['unknown conversation', { conversation_id: 'nope' }, 404, 'conversation not found'],
    ])('rejects %s with that HTTP status', async (_case, body, rc, errorMsg) => {
      const result = await api.needHuman(body);
      expect(result.status).toBe(rc);
      expect(result.json).toEqual({ status: 0, rc, error_msg: errorMsg });
    });
  });

  it('GET /version and GET /health work without credentials', async () => {
    expect((await call(emulator.url, 'GET', '/version')).json).toEqual({ version: '1.3' });
    expect((await call(emulator.url, 'GET', '/health')).status).toBe(200);
  });

  it('answers a bad JSON body with HTTP 400 and the invalid-data text', async () => {
    const result = await call(emulator.url, 'POST', '/v1/note', {
      headers: { ...authHeaders('earlier'), 'content-type': 'application/json' },
      rawBody: '{not json',
    });
    expect(result.status).toBe(400);
    expect(result.json).toEqual({ status: 0, rc: 400, error_msg: AUTH_TEXT });
  });
});
