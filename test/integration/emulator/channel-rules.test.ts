import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { platform, startTestEmulator } from './emulator-test-kit.js';

describe('channel rules (real HTTP)', () => {
  let emulator: EmulatorHandle;
  let api: ReturnType<typeof platform>;

  beforeAll(async () => {
    emulator = await startTestEmulator({
      links: { reachable: ['https://toko.example/'], images: ['https://cdn.toko.example/'] },
    });
    api = platform(emulator);
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    await emulator.admin.reset({ empty: true });
  });

  const lastStatus = async (conversationId: string) => {
    const list = (await api.history(conversationId)).json.data.list;
    return list.at(-1).delivery_status as string;
  };

  describe('24-hour reply window', () => {
    it.each([
      ['whatsapp_api', 'failed'],
      ['instagram', 'failed'],
      ['whatsapp_qr', 'delivered'],
      ['telegram', 'delivered'],
      // Messenger too: webhook-payloads.md §4; the bridge holds such replies as well (issue 12).
      ['facebook', 'failed'],
      ['webchat', 'delivered'],
    ])('a send 25 hours after the customer last wrote on %s ends %s', async (type, expected) => {
      emulator.admin.createConversation({ id: 'c1', channel: { type: type as 'telegram' } });
      emulator.admin.customerMessage('c1', { text: 'Halo', at: '25h' });
      const result = await api.send({ conversation_id: 'c1', text: 'Maaf baru dibalas' });
      // Accepted either way: the failure shows only in the history.
      expect(result.json).toEqual({ conversation_id: 'c1', success: true });
      expect(await lastStatus('c1')).toBe(expected);
    });

    it.each([['whatsapp_api'], ['instagram'], ['facebook']])(
      'a send 23 hours later on %s is delivered',
      async (type) => {
        emulator.admin.createConversation({ id: 'c1', channel: { type: type as 'instagram' } });
        emulator.admin.customerMessage('c1', { text: 'Halo', at: '23h' });
        await api.send({ conversation_id: 'c1', text: 'Masih dalam jendela' });
        expect(await lastStatus('c1')).toBe('delivered');
      },
    );

    it('opens the window again when the customer writes again', async () => {
      emulator.admin.createConversation({ id: 'c1', channel: { type: 'whatsapp_api' } });
      emulator.admin.customerMessage('c1', { text: 'Lama', at: '30h' });
      await api.send({ conversation_id: 'c1', text: 'gagal' });
      expect(await lastStatus('c1')).toBe('failed');
      emulator.admin.customerMessage('c1', { text: 'Baru' });
      await api.send({ conversation_id: 'c1', text: 'berhasil' });
      expect(await lastStatus('c1')).toBe('delivered');
    });

    it('applies to agent replies too, with a timestamp given in WIB', async () => {
      const old = new Date(Date.now() - 26 * 3_600_000 + 7 * 3_600_000)
        .toISOString()
        .slice(0, 19)
        .replace('T', ' ');
      emulator.admin.createConversation({ id: 'c1', channel: { type: 'instagram' } });
      emulator.admin.customerMessage('c1', { text: 'Halo', at: old });
      const reply = emulator.admin.agentReply('c1', 'Maaf telat');
      expect(reply.deliveryStatus).toBe('failed');
    });
  });

  describe('links in text', () => {
    beforeEach(() => {
      emulator.admin.createConversation({ id: 'c1' });
      emulator.admin.customerMessage('c1', { text: 'Halo' });
    });
    const sent = async () => {
      const list = (await api.history('c1')).json.data.list.slice(1);
      return list.map((m: { message_type: string; message: string; mime_type: string }) => ({
        type: m.message_type,
        message: m.message,
        mime: m.mime_type,
      }));
    };

    it.each([
      [
        'keeps a reachable link in the text',
        'Katalog: https://toko.example/katalog ya',
        [{ type: 'text', message: 'Katalog: https://toko.example/katalog ya', mime: 'text/plain' }],
      ],
      [
        'removes an unreachable link',
        'Cek https://gone.example/x dulu ya.',
        [{ type: 'text', message: 'Cek dulu ya.', mime: 'text/plain' }],
      ],
      [
        'sends an image link as a separate image message',
        'Ini fotonya https://cdn.toko.example/p/1.png mantap',
        [
          { type: 'text', message: 'Ini fotonya mantap', mime: 'text/plain' },
          { type: 'image', message: 'https://cdn.toko.example/p/1.png', mime: 'image/png' },
        ],
      ],
      [
        'handles all three at once, images in order',
        'Lihat https://cdn.toko.example/a.jpg dan https://cdn.toko.example/b.png, info https://toko.example/i, lama https://old.example/z.',
        [
          { type: 'text', message: 'Lihat dan, info https://toko.example/i, lama.', mime: 'text/plain' },
          { type: 'image', message: 'https://cdn.toko.example/a.jpg', mime: 'image/jpeg' },
          { type: 'image', message: 'https://cdn.toko.example/b.png', mime: 'image/png' },
        ],
      ],
      [
        'sends a text of exactly one link as it stands, even unreachable',
        'https://gone.example/only',
        [{ type: 'text', message: 'https://gone.example/only', mime: 'text/plain' }],
      ],
      [
        'sends a text of exactly one image link as it stands',
        'https://cdn.toko.example/a.jpg',
        [{ type: 'text', message: 'https://cdn.toko.example/a.jpg', mime: 'text/plain' }],
      ],
      [
        'sends only the image when nothing else is left',
        'https://cdn.toko.example/a.jpg https://gone.example/b',
        [{ type: 'image', message: 'https://cdn.toko.example/a.jpg', mime: 'image/jpeg' }],
      ],
    ])('%s', async (_case, text, expected) => {
      const result = await api.send({ conversation_id: 'c1', text });
      expect(result.json.success).toBe(true);
      expect(await sent()).toEqual(expected);
    });
  });
});
