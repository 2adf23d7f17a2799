import { describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import type { MediaInput } from '../../../src/platform/build-requests.js';
import type { PlatformMessage } from '../../../src/platform/platform-message.js';
import { clientFor, FORMS, type Form, raw, requestsSeen, sentBody, useEmulator } from './conformance-kit.js';

/** The scheme name the emulator logs for each form's native credentials. */
const NATIVE_AUTH_LOGGED: Record<Form, string> = { current: 'business-headers', earlier: 'plain-bearer' };

/** Media rows per type: a MIME type the form takes, and what the emulator stores without one. */
const MEDIA_ROWS = [
  { type: 'image', current: 'image/png', earlier: 'image/gif', fallback: 'image/jpeg' },
  { type: 'video', current: 'video/mp4', earlier: 'video/x-msvideo', fallback: 'video/mp4' },
  { type: 'audio', current: 'audio/mp3', earlier: 'audio/wav', fallback: 'audio/mp3' },
  { type: 'document', current: 'text/plain', earlier: 'application/msword', fallback: 'application/pdf' },
] as const;

async function collect(iterator: AsyncIterable<PlatformMessage>): Promise<number[]> {
  const ids: number[] = [];
  for await (const message of iterator) ids.push(message.id);
  return ids;
}

function seedCustomerMessages(emulator: EmulatorHandle, conversationId: string, count: number): number[] {
  emulator.admin.createConversation({ id: conversationId, channel: { type: 'telegram' } });
  const ids: number[] = [];
  for (let i = 1; i <= count; i += 1) {
    ids.push(emulator.admin.customerMessage(conversationId, { text: `pesan ${i}` }).id);
  }
  return ids;
}

describe.each(FORMS)('endpoints, %s form', (form) => {
  const emulator = useEmulator(form);
  const textFor = form === 'earlier' ? { text: 'lihat lampiran' } : {};

  describe('sendMessage', () => {
    it('text: the client returns the conversation, the emulator stores an agent reply under the business name', async () => {
      emulator().admin.createConversation({ id: 'conv-1' });
      const result = await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', text: 'Halo kak' });

      expect(result).toEqual({ conversationId: 'conv-1' });
      const [request, ...more] = requestsSeen(emulator());
      expect(more).toEqual([]);
      expect(request).toMatchObject({
        method: 'POST',
        path: '/v1/message',
        endpoint: 'send',
        authenticated: true,
        auth: NATIVE_AUTH_LOGGED[form],
        httpStatus: 200,
        rc: null,
        body: { conversation_id: 'conv-1', text: 'Halo kak' },
      });
      const [stored] = emulator().admin.conversation('conv-1').messages;
      expect(stored).toMatchObject({
        origin: 'api',
        sender: 'agent',
        senderName: 'Toko Emulator',
        type: 'text',
        text: 'Halo kak',
        deliveryStatus: 'delivered',
      });
    });

    it.each(MEDIA_ROWS)(
      'media $type with its MIME type: sent in the form’s spelling and stored as given',
      async (row) => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const mimeType = row[form];
        const media: MediaInput = { type: row.type, url: `https://files.example/${row.type}.bin`, mimeType };
        await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', media, ...textFor });

        const sentMedia = sentBody(emulator()).media;
        const spelling = form === 'current' ? 'mime_type' : 'mimetype';
        const other = form === 'current' ? 'mimetype' : 'mime_type';
        expect(sentMedia).toEqual({ url: media.url, type: row.type, [spelling]: mimeType });
        expect(sentMedia).not.toHaveProperty(other);
        const [message] = (await clientFor(emulator()).getMessages('conv-1')).messages;
        expect(message).toMatchObject({ text: media.url, messageType: row.type, mimeType });
      },
    );

    it.each(MEDIA_ROWS)(
      'media $type without a MIME type: none sent, the emulator’s default stored',
      async (row) => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const media: MediaInput = { type: row.type, url: `https://files.example/${row.type}.bin` };
        await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', media, ...textFor });

        expect(sentBody(emulator()).media).toEqual({ url: media.url, type: row.type });
        const [message] = (await clientFor(emulator()).getMessages('conv-1')).messages;
        expect(message).toMatchObject({ text: media.url, messageType: row.type, mimeType: row.fallback });
      },
    );

    it('media with a caption, name and thumbnail: all carried through', async () => {
      emulator().admin.createConversation({ id: 'conv-1' });
      const media: MediaInput = {
        type: 'image',
        url: 'https://files.example/a.jpg',
        caption: 'Foto produk',
        name: 'a.jpg',
        thumbnail: 'https://files.example/a-thumb.jpg',
      };
      await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', media, ...textFor });

      expect(sentBody(emulator()).media).toEqual({
        url: media.url,
        type: 'image',
        caption: 'Foto produk',
        name: 'a.jpg',
        thumbnail: 'https://files.example/a-thumb.jpg',
      });
      expect(emulator().admin.conversation('conv-1').messages[0]?.caption).toBe('Foto produk');
    });

    it('an http thumbnail: the spec asks https of the file url only, so it is sent and accepted', async () => {
      emulator().admin.createConversation({ id: 'conv-1' });
      const media: MediaInput = {
        type: 'video',
        url: 'https://files.example/a.mp4',
        thumbnail: 'http://thumbs.example/a.jpg',
      };
      await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', media, ...textFor });
      expect(sentBody(emulator()).media).toMatchObject({ thumbnail: 'http://thumbs.example/a.jpg' });
      expect(requestsSeen(emulator())).toMatchObject([{ httpStatus: 200, rc: null }]);
      expect(emulator().admin.conversation('conv-1').messageCount).toBe(1);
    });

    if (form === 'current') {
      it('text with media: the client leaves the text out (the spec says it is ignored), one media message', async () => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const media: MediaInput = {
          type: 'image',
          url: 'https://files.example/a.jpg',
          mimeType: 'image/jpeg',
        };
        await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', text: 'abaikan saya', media });

        expect(sentBody(emulator())).not.toHaveProperty('text');
        const { messages } = await clientFor(emulator()).getMessages('conv-1');
        expect(messages).toHaveLength(1);
        expect(messages[0]).toMatchObject({ messageType: 'image', text: media.url, caption: '' });
      });

      it('replyToMessageId: sent as reply_to_message_id and read back from the history', async () => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const question = emulator().admin.customerMessage('conv-1', { text: 'Ada warna merah?' });
        const client = clientFor(emulator());
        await client.sendMessage({
          conversationId: 'conv-1',
          text: 'Ada',
          replyToMessageId: question.messageId,
        });

        expect(requestsSeen(emulator())[0]?.body).toMatchObject({ reply_to_message_id: question.messageId });
        const { messages } = await client.getMessages('conv-1');
        expect(messages.map((m) => m.replyToMessageId)).toEqual([null, question.messageId]);
      });
    } else {
      it('media: the earlier form needs text too; it is sent, and the emulator keeps it as the caption', async () => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const media: MediaInput = {
          type: 'document',
          url: 'https://files.example/a.pdf',
          mimeType: 'application/pdf',
        };
        await clientFor(emulator()).sendMessage({ conversationId: 'conv-1', text: 'Invoice Anda', media });

        expect(requestsSeen(emulator())[0]?.body).toMatchObject({ text: 'Invoice Anda' });
        const [message] = (await clientFor(emulator()).getMessages('conv-1')).messages;
        expect(message).toMatchObject({
          messageType: 'document',
          text: media.url,
          mimeType: 'application/pdf',
        });
        expect(message?.metadata).toMatchObject({ caption: 'Invoice Anda' });
      });

      it('replyToMessageId: the earlier form has no such field, so it is not sent and reads back as null', async () => {
        emulator().admin.createConversation({ id: 'conv-1' });
        const question = emulator().admin.customerMessage('conv-1', { text: 'Ada warna merah?' });
        const client = clientFor(emulator());
        await client.sendMessage({
          conversationId: 'conv-1',
          text: 'Ada',
          replyToMessageId: question.messageId,
        });

        expect(requestsSeen(emulator())[0]?.body).toEqual({ conversation_id: 'conv-1', text: 'Ada' });
        const { messages } = await client.getMessages('conv-1');
        expect(messages.map((m) => m.replyToMessageId)).toEqual([null, null]);
      });
    }
  });

  describe('getMessages', () => {
    it('every message kind comes back oldest first, in the one PlatformMessage shape', async () => {
      emulator().admin.createConversation({ id: 'conv-1', label: 'Budi' });
      const customer = emulator().admin.customerMessage('conv-1', { text: 'Halo' });
      const client = clientFor(emulator());
      await client.sendMessage({ conversationId: 'conv-1', text: 'Halo juga' });
      await client.addNote('conv-1', 'Pelanggan lama');

      const { messages, lastId } = await client.getMessages('conv-1');
      const stored = emulator().admin.conversation('conv-1').messages;
      expect(messages.map((m) => m.id)).toEqual(stored.map((m) => m.id));
      expect(messages.map((m) => m.messageId)).toEqual(stored.map((m) => m.messageId));
      expect(lastId).toBe(stored.at(-1)?.id);
      expect(messages.map((m) => [m.sender, m.text, m.conversationId])).toEqual([
        ['user', 'Halo', 'conv-1'],
        ['agent', 'Halo juga', 'conv-1'],
        ['agent', 'Pelanggan lama', 'conv-1'],
      ]);
      expect(messages[0]?.id).toBe(customer.id);
      if (form === 'current') {
        // Current form: sender names and delivery status; notes carry no marker (isNote null).
        expect(messages.map((m) => [m.senderName, m.deliveryStatus, m.isNote])).toEqual([
          ['Budi', 'delivered', null],
          ['Toko Emulator', 'delivered', null],
          ['api', 'sent', null],
        ]);
      } else {
        // Earlier form: is_note and lock_by_human; no sender_name or delivery_status fields.
        expect(messages.map((m) => [m.senderName, m.deliveryStatus, m.isNote, m.lockByHuman])).toEqual([
          [null, null, false, false],
          [null, null, false, false],
          [null, null, true, false],
        ]);
      }
    });

    it('limit: the oldest `limit` messages, and the cursor at the last of them', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 5);
      const page = await clientFor(emulator()).getMessages('conv-1', { limit: 2 });

      expect(page.messages.map((m) => m.id)).toEqual(ids.slice(0, 2));
      expect(page.lastId).toBe(ids[1]);
      // Current form: the server pages; earlier form: no pagination, the client slices.
      expect(requestsSeen(emulator()).map((r) => r.path)).toEqual([
        form === 'current' ? '/v1/message/conv-1?limit=2' : '/v1/message/conv-1',
      ]);
    });

    it('limit 0 means every message', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 4);
      const page = await clientFor(emulator()).getMessages('conv-1', { limit: 0 });
      expect(page.messages.map((m) => m.id)).toEqual(ids);
    });

    it('lastId: only messages after it', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 5);
      const page = await clientFor(emulator()).getMessages('conv-1', { lastId: ids[2] });

      expect(page.messages.map((m) => m.id)).toEqual(ids.slice(3));
      expect(page.lastId).toBe(ids[4]);
      expect(requestsSeen(emulator()).map((r) => r.path)).toEqual([
        form === 'current' ? `/v1/message/conv-1?last_id=${ids[2]}` : '/v1/message/conv-1',
      ]);
    });

    it('limit with lastId: the oldest `limit` after the cursor, so paging misses nothing', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 6);
      const page = await clientFor(emulator()).getMessages('conv-1', { lastId: ids[1], limit: 2 });
      expect(page.messages.map((m) => m.id)).toEqual(ids.slice(2, 4));
      expect(page.lastId).toBe(ids[3]);
    });

    it('nothing new: an empty list, and the cursor stays where it was (the platform answers last_id 0)', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 3);
      const last = ids[2] ?? 0;
      const page = await clientFor(emulator()).getMessages('conv-1', { lastId: last });

      expect(page).toEqual({ messages: [], lastId: last });
      // What the emulator itself answers for the same cursor.
      const answer = await raw(emulator(), 'GET', `/v1/message/conv-1?last_id=${last}`);
      if (form === 'current') {
        expect(answer.json).toMatchObject({ status: 1, rc: 200, data: { list: null, last_id: 0 } });
      } else {
        // Earlier form: no pagination, every message comes back; the client drops what it has seen.
        expect(answer.json).toMatchObject({ status: 1 });
        expect((answer.json as { data: unknown[] }).data).toHaveLength(3);
      }
    });

    it.each([
      ['a slash', 'conv/1'],
      ['spaces', 'conv 1'],
      ['a hash and a question mark', 'conv#1?x=y'],
      ['non-ASCII letters', 'percakapan-ñ-日本'],
      ['a percent sign', '100%-real'],
      ['leading and trailing spaces', ' conv-1 '],
    ])(
      'a conversation id with %s reaches the same conversation on every call (ids are opaque)',
      async (_what, id) => {
        emulator().admin.createConversation({ id });
        // A neighbour whose id differs only in what a careless reader might normalise away.
        emulator().admin.createConversation({ id: id.trim() === id ? `${id}-x` : id.trim() });
        emulator().admin.customerMessage(id, { text: 'Halo' });
        const client = clientFor(emulator());
        await client.sendMessage({ conversationId: id, text: 'Balas' });
        await client.addNote(id, 'Catatan');
        await client.markNeedHuman(id);
        const { messages } = await client.getMessages(id);

        expect(messages.map((m) => [m.conversationId, m.text])).toEqual([
          [id, 'Halo'],
          [id, 'Balas'],
          [id, 'Catatan'],
        ]);
        expect(emulator().admin.conversation(id).needHuman).toBe(true);
        expect(emulator().admin.needHumanTotal()).toBe(1);
        const history = requestsSeen(emulator()).find((r) => r.endpoint === 'history');
        expect(history?.path).toBe(`/v1/message/${encodeURIComponent(id)}`);
      },
    );
  });

  describe('iterateMessages', () => {
    it('walks every message across several pages, oldest first, without duplicates', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 25);
      // Another conversation's messages interleave the global id counter.
      emulator().admin.createConversation({ id: 'conv-2' });
      emulator().admin.customerMessage('conv-2', { text: 'lain' });
      emulator().admin.customerMessage('conv-1', { text: 'terakhir' });
      const all = emulator()
        .admin.conversation('conv-1')
        .messages.map((m) => m.id);
      expect(all).toHaveLength(26);

      const seen = await collect(clientFor(emulator()).iterateMessages('conv-1', { pageSize: 10 }));

      expect(seen).toEqual(all);
      const paths = requestsSeen(emulator()).map((r) => r.path);
      if (form === 'current') {
        // 10 + 10 + 6, then one empty page that ends the walk.
        expect(paths).toEqual([
          '/v1/message/conv-1?limit=10&last_id=0',
          `/v1/message/conv-1?limit=10&last_id=${ids[9]}`,
          `/v1/message/conv-1?limit=10&last_id=${ids[19]}`,
          `/v1/message/conv-1?limit=10&last_id=${all[25]}`,
        ]);
      } else {
        expect(paths).toEqual(['/v1/message/conv-1']);
      }
    });

    it('from afterId: only what follows it', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 12);
      const seen = await collect(
        clientFor(emulator()).iterateMessages('conv-1', { afterId: ids[4], pageSize: 5 }),
      );

      expect(seen).toEqual(ids.slice(5));
      expect(requestsSeen(emulator())).toHaveLength(form === 'current' ? 3 : 1);
    });

    it('maxPages bounds the walk', async () => {
      const ids = seedCustomerMessages(emulator(), 'conv-1', 9);
      const seen = await collect(
        clientFor(emulator()).iterateMessages('conv-1', { pageSize: 2, maxPages: 2 }),
      );
      expect(seen).toEqual(form === 'current' ? ids.slice(0, 4) : ids);
      expect(requestsSeen(emulator())).toHaveLength(form === 'current' ? 2 : 1);
    });
  });

  describe('addNote', () => {
    it('adds a note the customer never gets, signed `api`', async () => {
      emulator().admin.createConversation({ id: 'conv-1' });
      const result = await clientFor(emulator()).addNote('conv-1', 'Pelanggan VIP');

      const [note, ...others] = emulator().admin.conversation('conv-1').notes;
      expect(others).toEqual([]);
      expect(note).toMatchObject({ text: 'Pelanggan VIP', senderName: 'api', isNote: true });
      // Current form answers the note's message_id; the earlier form only `status` and `message`.
      expect(result).toEqual(form === 'current' ? { messageId: note?.messageId } : {});
      expect(requestsSeen(emulator())).toMatchObject([
        {
          method: 'POST',
          path: '/v1/note',
          endpoint: 'note',
          httpStatus: 200,
          body: { conversation_id: 'conv-1', note: 'Pelanggan VIP' },
        },
      ]);
    });
  });

  describe('markNeedHuman and getNeedHumanTotal', () => {
    it('marking twice succeeds both times and counts the conversation once', async () => {
      emulator().admin.createConversation({ id: 'conv-1' });
      const client = clientFor(emulator());
      await expect(client.markNeedHuman('conv-1')).resolves.toBeUndefined();
      await expect(client.markNeedHuman('conv-1')).resolves.toBeUndefined();

      expect(emulator().admin.conversation('conv-1')).toMatchObject({ needHuman: true, status: 'Butuh CS' });
      expect(await client.getNeedHumanTotal()).toBe(1);
      expect(requestsSeen(emulator()).map((r) => [r.endpoint, r.httpStatus, r.rc])).toEqual([
        ['needHuman', 200, null],
        ['needHuman', 200, null],
        ['needHumanTotal', 200, null],
      ]);
    });

    it('the total before and after marking', async () => {
      for (const id of ['conv-1', 'conv-2', 'conv-3']) emulator().admin.createConversation({ id });
      const client = clientFor(emulator());
      expect(await client.getNeedHumanTotal()).toBe(0);
      await client.markNeedHuman('conv-1');
      await client.markNeedHuman('conv-3');
      expect(await client.getNeedHumanTotal()).toBe(2);
      expect(emulator().admin.needHumanTotal()).toBe(2);
    });

    if (form === 'earlier') {
      it('lock_by_human in the history follows the mark', async () => {
        emulator().admin.createConversation({ id: 'conv-1' });
        emulator().admin.customerMessage('conv-1', { text: 'Halo' });
        const client = clientFor(emulator());
        expect((await client.getMessages('conv-1')).messages[0]?.lockByHuman).toBe(false);
        await client.markNeedHuman('conv-1');
        expect((await client.getMessages('conv-1')).messages[0]?.lockByHuman).toBe(true);
      });
    }
  });

  describe('getVersion', () => {
    it('reads the version the emulator serves', async () => {
      expect(await clientFor(emulator()).getVersion()).toBe('1.3');
      expect(requestsSeen(emulator())).toMatchObject([{ method: 'GET', path: '/version', httpStatus: 200 }]);
    });
  });
});

describe('delivery_status as it moves (current form)', () => {
  const emulator = useEmulator('current', { delivery: 'manual', finalDeliveryStatus: 'read' });

  it('the client reads every value the emulator steps through: pending, sent, delivered, read', async () => {
    emulator().admin.createConversation({ id: 'conv-1' });
    const client = clientFor(emulator());
    await client.sendMessage({ conversationId: 'conv-1', text: 'Halo' });

    const seen: unknown[] = [];
    for (let step = 0; step < 4; step += 1) {
      seen.push((await client.getMessages('conv-1')).messages[0]?.deliveryStatus);
      emulator().admin.advanceDelivery();
    }
    expect(seen).toEqual(['pending', 'sent', 'delivered', 'read']);
  });
});
