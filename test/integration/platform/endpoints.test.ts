import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformClientOptions } from '../../../src/platform/client-options.js';
import { createPlatformClient } from '../../../src/platform/create-platform-client.js';
import { isPlatformError } from '../../../src/platform/platform-error.js';
import { ReplyWindowClosedError } from '../../../src/platform/reply-window-closed-error.js';
import { type PlatformTestServer, startPlatformTestServer } from '../../support/platform-test-server.js';

const SECRET = 'sk_live_7f3a9c';
const BUSINESS = 'biz-42';
const FAST = { retries: 2, minDelayMs: 1, maxDelayMs: 5 };

let server: PlatformTestServer;
beforeAll(async () => {
  server = await startPlatformTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
});

const current = (overrides: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({
    baseUrl: server.url,
    form: 'current',
    auth: { scheme: 'headers', businessId: BUSINESS, secret: SECRET },
    retry: FAST,
    ...overrides,
  });
const earlier = (overrides: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({
    baseUrl: server.url,
    form: 'earlier',
    auth: { scheme: 'bearer-secret', businessId: BUSINESS, secret: SECRET },
    retry: FAST,
    ...overrides,
  });

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const currentMessage = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  message_id: `m-${id}`,
  conversation_id: 'conv-1',
  sender: id % 2 === 0 ? 'agent' : 'user',
  sender_name: id % 2 === 0 ? 'Aira - AI' : 'Budi',
  message: `pesan ${id}`,
  caption: '',
  message_type: 'text',
  mime_type: 'text/plain',
  sent_at: '2026-11-21 07:00:00',
  delivery_status: 'read',
  ...extra,
});

describe('auth schemes (headers the server saw)', () => {
  it.each([
    [
      'headers',
      { scheme: 'headers', businessId: BUSINESS, secret: SECRET },
      { business: BUSINESS, secret: SECRET },
    ],
    [
      'bearer',
      { scheme: 'bearer', businessId: BUSINESS, secret: SECRET },
      {
        authorization: `Bearer ${Buffer.from(`${BUSINESS}:${SECRET}`).toString('base64')}`,
      },
    ],
    ['bearer-secret', { scheme: 'bearer-secret', secret: SECRET }, { authorization: `Bearer ${SECRET}` }],
  ] as const)('%s', async (_name, auth, expected) => {
    server.enqueue('GET /v1/conversation/need-human/total', {
      json: { status: 1, message: 'ok', data: { total: 2 } },
    });
    await current({ auth }).getNeedHumanTotal();
    const [seen] = server.requests;
    const credentialHeaders = ['business', 'secret', 'authorization', 'merchant_id', 'secret_key'];
    const sent = Object.fromEntries(
      Object.entries(seen?.headers ?? {}).filter(([name]) => credentialHeaders.includes(name)),
    );
    expect(sent).toEqual(expected);
  });

  it('earlier-form history also carries merchant_id and secret_key; other earlier calls do not', async () => {
    server.enqueue('GET /v1/message/conv-1', { json: { status: 1, data: [], message: 'list message' } });
    server.enqueue('POST /v1/note', { json: { status: 1, message: 'Sukses' } });
    await earlier().getMessages('conv-1');
    await earlier().addNote('conv-1', 'catatan');
    const [history, note] = server.requests;
    expect(history?.headers).toMatchObject({
      authorization: `Bearer ${SECRET}`,
      merchant_id: BUSINESS,
      secret_key: SECRET,
    });
    expect(note?.headers).toMatchObject({ authorization: `Bearer ${SECRET}` });
    expect(note?.headers.secret_key).toBeUndefined();
  });
});

describe('sendMessage', () => {
  it('current form: text, reply_to_message_id, JSON content type; returns the conversation id', async () => {
    server.enqueue('POST /v1/message', { json: { conversation_id: 'conv-1', success: true } });
    const result = await current().sendMessage({
      conversationId: 'conv-1',
      text: 'Halo kak',
      replyToMessageId: 'm-9',
    });
    expect(result).toEqual({ conversationId: 'conv-1' });
    const [seen] = server.requests;
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.json).toEqual({ conversation_id: 'conv-1', text: 'Halo kak', reply_to_message_id: 'm-9' });
  });

  it('current form: text is not sent when media is present', async () => {
    server.enqueue('POST /v1/message', { json: { conversation_id: 'conv-1', success: true } });
    await current().sendMessage({
      conversationId: 'conv-1',
      text: 'lihat gambar',
      media: { url: 'https://cdn.example.com/p.png', type: 'image', mimeType: 'image/png', caption: 'foto' },
    });
    expect(server.requests[0]?.json).toEqual({
      conversation_id: 'conv-1',
      media: { url: 'https://cdn.example.com/p.png', type: 'image', mime_type: 'image/png', caption: 'foto' },
    });
  });

  it('earlier form: text and media with `mimetype`; the message id when the answer has one', async () => {
    server.enqueue('POST /v1/message', { json: { status: 1, message: 'Sukses', message_id: 'm-77' } });
    const result = await earlier().sendMessage({
      conversationId: 'conv-1',
      text: 'dokumen',
      media: { url: 'https://cdn.example.com/a.pdf', type: 'document', mimeType: 'application/pdf' },
    });
    expect(result).toEqual({ conversationId: 'conv-1', messageId: 'm-77' });
    expect(server.requests[0]?.json).toEqual({
      conversation_id: 'conv-1',
      text: 'dokumen',
      media: { url: 'https://cdn.example.com/a.pdf', type: 'document', mimetype: 'application/pdf' },
    });
  });

  it.each([
    [
      'an http URL',
      'current',
      { url: 'http://cdn.example.com/p.png', type: 'image' },
      'media.url: must be an https URL that the platform can reach publicly',
    ],
    [
      'a bad type',
      'current',
      { url: 'https://cdn.example.com/p.png', type: 'sticker' },
      'media.type must be one of image, video, audio, document',
    ],
    [
      'a bad mime type in the current form',
      'current',
      { url: 'https://cdn.example.com/p.gif', type: 'image', mimeType: 'image/gif' },
      'media.mimeType must be one of image/jpeg, image/png, video/mp4, audio/mp3, text/plain in the current form',
    ],
    [
      'no text in the earlier form',
      'earlier',
      { url: 'https://cdn.example.com/p.gif', type: 'image', mimeType: 'image/gif' },
      'text is required in the earlier form',
    ],
  ] as const)('refuses media with %s without calling the platform', async (_name, form, media, detail) => {
    const client = form === 'current' ? current() : earlier();
    const error = await rejectionOf(client.sendMessage({ conversationId: 'conv-1', media: media as never }));
    expect(isPlatformError(error, 'VALIDATION')).toBe(true);
    expect((error as Error).message).toContain(`[VALIDATION, not sent]: ${detail};`);
    expect(server.requests).toHaveLength(0);
  });

  it('earlier form accepts a free MIME type (image/gif)', async () => {
    server.enqueue('POST /v1/message', { json: { status: 1, message: 'Sukses' } });
    await earlier().sendMessage({
      conversationId: 'conv-1',
      text: 'gif',
      media: { url: 'https://cdn.example.com/p.gif', type: 'image', mimeType: 'image/gif' },
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('the reply-window guard', () => {
  it('refuses after the window closed, without calling the platform', async () => {
    const closesAt = new Date(Date.now() - 1000);
    const error = await rejectionOf(
      current().sendMessage({ conversationId: 'conv-1', text: 'telat' }, { windowClosesAt: closesAt }),
    );
    expect(error).toBeInstanceOf(ReplyWindowClosedError);
    expect((error as ReplyWindowClosedError).code).toBe('REPLY_WINDOW_CLOSED');
    expect((error as ReplyWindowClosedError).windowClosesAt).toBe(closesAt);
    expect((error as Error).message).toMatch(
      /^reply to conversation conv-1 refused: its reply window closed at .*Z \(now .*Z\); free-form messages are no longer allowed/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('sends while the window is open', async () => {
    server.enqueue('POST /v1/message', { json: { conversation_id: 'conv-1', success: true } });
    await current().sendMessage(
      { conversationId: 'conv-1', text: 'masih sempat' },
      { windowClosesAt: new Date(Date.now() + 60_000) },
    );
    expect(server.requests).toHaveLength(1);
  });

  it("judges the window by the caller's clock when given one", async () => {
    server.enqueue('POST /v1/message', { json: { conversation_id: 'conv-1', success: true } });
    // Closed on the system clock, open on the caller's (20 s behind): the caller's clock decides.
    const closesAt = new Date(Date.now() - 10_000);
    const behind = () => new Date(Date.now() - 20_000);
    await current().sendMessage(
      { conversationId: 'conv-1', text: 'x' },
      { windowClosesAt: closesAt, now: behind },
    );
    expect(server.requests).toHaveLength(1);
    const ahead = () => new Date(Date.now() + 20_000);
    const error = await rejectionOf(
      current().sendMessage(
        { conversationId: 'conv-1', text: 'y' },
        { windowClosesAt: new Date(Date.now() + 10_000), now: ahead },
      ),
    );
    expect(error).toBeInstanceOf(ReplyWindowClosedError);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an invalid windowClosesAt', async () => {
    const error = await rejectionOf(
      current().sendMessage({ conversationId: 'conv-1', text: 'x' }, { windowClosesAt: new Date('nope') }),
    );
    expect(isPlatformError(error, 'VALIDATION')).toBe(true);
    expect((error as Error).message).toContain('windowClosesAt must be a valid Date');
    expect(server.requests).toHaveLength(0);
  });
});

describe('getMessages', () => {
  it('current form: sends limit and last_id; normalises; WIB sent_at becomes an instant', async () => {
    server.enqueue('GET /v1/message/conv-1', {
      json: {
        status: 1,
        rc: 200,
        message: 'list message',
        data: {
          list: [currentMessage(11), currentMessage(12, { reply_to_message_id: 'm-11' })],
          last_id: 12,
        },
        ts: 1795219200,
      },
    });
    const page = await current().getMessages('conv-1', { limit: 2, lastId: 10 });
    expect(server.requests[0]?.query).toEqual({ limit: '2', last_id: '10' });
    expect(page.lastId).toBe(12);
    expect(page.messages.map((m) => m.id)).toEqual([11, 12]);
    expect(page.messages[1]).toEqual({
      id: 12,
      messageId: 'm-12',
      conversationId: 'conv-1',
      sender: 'agent',
      senderName: 'Aira - AI',
      text: 'pesan 12',
      caption: '',
      messageType: 'text',
      mimeType: 'text/plain',
      sentAt: new Date('2026-11-21T00:00:00Z'),
      deliveryStatus: 'read',
      replyToMessageId: 'm-11',
      isNote: null,
      lockByHuman: null,
      metadata: null,
    });
  });

  it('current form: a null list is no new messages, and the cursor stays where it was', async () => {
    server.enqueue('GET /v1/message/conv-1', {
      json: { status: 1, rc: 200, message: 'list message', data: { list: null, last_id: 0 }, ts: 1 },
    });
    expect(await current().getMessages('conv-1', { lastId: 40 })).toEqual({ messages: [], lastId: 40 });
  });

  it('an unknown conversation is an empty list, not an error', async () => {
    server.enqueue('GET /v1/message/nope', {
      json: { status: 1, rc: 200, data: { list: null, last_id: 0 } },
    });
    expect(await current().getMessages('nope')).toEqual({ messages: [], lastId: 0 });
  });

  it('encodes the conversation id in the path', async () => {
    server.enqueue('GET /v1/message/a%2Fb%20c', { json: { status: 1, data: { list: null, last_id: 0 } } });
    await current().getMessages('a/b c');
    expect(server.requests[0]?.path).toBe('/v1/message/a%2Fb%20c');
  });

  it('earlier form: all messages, no query; lastId and limit applied on the client', async () => {
    const items = [1, 2, 3, 4].map((id) => ({
      id: String(id),
      message_id: `m-${id}`,
      conversation_id: 'conv-1',
      sender: 'user',
      message: `pesan ${id}`,
      message_type: 'text',
      mime_type: 'text/plain',
      sent_at: '2026-11-21 07:00:00',
      metadata: id === 3 ? '{not json' : '{"via":"wa"}',
      lock_by_human: 0,
      is_note: id === 2 ? 1 : 0,
    }));
    server.setDefault('GET /v1/message/conv-1', {
      json: { status: 1, data: items, message: 'list message' },
    });
    const all = await earlier().getMessages('conv-1');
    expect(server.requests[0]?.query).toEqual({});
    expect(all.lastId).toBe(4);
    expect(all.messages.map((m) => [m.id, m.isNote, m.lockByHuman, m.metadata])).toEqual([
      [1, false, false, { via: 'wa' }],
      [2, true, false, { via: 'wa' }],
      [3, false, false, null],
      [4, false, false, { via: 'wa' }],
    ]);
    const window = await earlier().getMessages('conv-1', { lastId: 1, limit: 2 });
    expect(window.messages.map((m) => m.id)).toEqual([2, 3]);
    expect(window.lastId).toBe(3);
    expect(server.requests[1]?.query).toEqual({});
  });
});

describe('iterateMessages', () => {
  const collect = async (iterator: AsyncIterable<{ id: number }>) => {
    const ids: number[] = [];
    for await (const message of iterator) ids.push(message.id);
    return ids;
  };

  it('walks the last_id cursor across pages until a null list', async () => {
    server.setDefault('GET /v1/message/conv-1', (request) => {
      const after = Number(request.query.last_id ?? 0);
      const limit = Number(request.query.limit ?? 0);
      const ids = [1, 2, 3, 4, 5, 6, 7].filter((id) => id > after).slice(0, limit || undefined);
      return {
        json: {
          status: 1,
          rc: 200,
          data: { list: ids.length ? ids.map((id) => currentMessage(id)) : null, last_id: ids.at(-1) ?? 0 },
        },
      };
    });
    expect(await collect(current().iterateMessages('conv-1', { afterId: 1, pageSize: 2 }))).toEqual([
      2, 3, 4, 5, 6, 7,
    ]);
    expect(server.requests.map((r) => r.query)).toEqual([
      { limit: '2', last_id: '1' },
      { limit: '2', last_id: '3' },
      { limit: '2', last_id: '5' },
      { limit: '2', last_id: '7' },
      // A full page followed by nothing: read once more without limit, in case `limit` kept the
      // newest messages and skipped older ones (docs/conformance.md, ambiguous readings).
      { last_id: '5' },
    ]);
  });

  it('a walk that ends on a page that is not full needs no extra request', async () => {
    server.setDefault('GET /v1/message/conv-1', (request) => {
      const after = Number(request.query.last_id ?? 0);
      const limit = Number(request.query.limit ?? 0);
      const ids = [1, 2, 3, 4, 5].filter((id) => id > after).slice(0, limit || undefined);
      return {
        json: {
          status: 1,
          data: { list: ids.length ? ids.map((id) => currentMessage(id)) : null, last_id: ids.at(-1) ?? 0 },
        },
      };
    });
    expect(await collect(current().iterateMessages('conv-1', { pageSize: 2 }))).toEqual([1, 2, 3, 4, 5]);
    expect(server.requests.map((r) => r.query.last_id)).toEqual(['0', '2', '4', '5']);
  });

  // Issue 12: the other reading of `limit` (the NEWEST messages after last_id). Before, the walk
  // returned [6, 7] and stopped: messages 1 to 5 were silently skipped.
  it('a platform whose limit keeps the newest messages: nothing is skipped, still oldest first', async () => {
    server.setDefault('GET /v1/message/newest', (request) => {
      const after = Number(request.query.last_id ?? 0);
      const limit = Number(request.query.limit ?? 0);
      const all = [1, 2, 3, 4, 5, 6, 7].filter((id) => id > after);
      const ids = limit > 0 ? all.slice(-limit) : all;
      return {
        json: {
          status: 1,
          data: { list: ids.length ? ids.map((id) => currentMessage(id)) : null, last_id: ids.at(-1) ?? 0 },
        },
      };
    });
    expect(await collect(current().iterateMessages('newest', { pageSize: 2 }))).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(server.requests.map((r) => r.query)).toEqual([
      { limit: '2', last_id: '0' },
      { limit: '2', last_id: '7' },
      { last_id: '0' },
    ]);
  });

  it('stops when the server does not advance its cursor (same page again and again)', async () => {
    server.setDefault('GET /v1/message/stuck', {
      json: { status: 1, data: { list: [currentMessage(1), currentMessage(2)], last_id: 2 } },
    });
    expect(await collect(current().iterateMessages('stuck', { pageSize: 2 }))).toEqual([1, 2]);
    // The full first page is read once more without limit (see above), then the walk ends.
    expect(server.requests).toHaveLength(3);
  });

  it('stops at maxPages against a server that never ends', async () => {
    server.setDefault('GET /v1/message/endless', (request) => {
      const next = Number(request.query.last_id ?? 0) + 1;
      return { json: { status: 1, data: { list: [currentMessage(next)], last_id: next } } };
    });
    expect(await collect(current().iterateMessages('endless', { pageSize: 1, maxPages: 5 }))).toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(server.requests).toHaveLength(5);
  });

  it('earlier form: one request, filtered to id > afterId', async () => {
    const items = [5, 6, 7].map((id) => ({
      ...currentMessage(id),
      is_note: 0,
      lock_by_human: 0,
      metadata: '',
    }));
    server.setDefault('GET /v1/message/conv-e', { json: { status: 1, data: items } });
    expect(await collect(earlier().iterateMessages('conv-e', { afterId: 5, pageSize: 1 }))).toEqual([6, 7]);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [{ pageSize: 0 }, 'pageSize must be a positive integer'],
    [{ maxPages: 1.5 }, 'maxPages must be a positive integer'],
    [{ afterId: -1 }, 'afterId must be a non-negative integer'],
  ])('refuses %j', async (options, detail) => {
    const error = await rejectionOf(collect(current().iterateMessages('conv-1', options)));
    expect(isPlatformError(error, 'VALIDATION')).toBe(true);
    expect((error as Error).message).toContain(detail);
    expect(server.requests).toHaveLength(0);
  });
});

describe('notes, need-human, total, version', () => {
  it.each([
    ['current', { message_id: 'n-1', success: true }, { messageId: 'n-1' }],
    ['earlier', { status: 1, message: 'Sukses' }, {}],
  ] as const)('addNote, %s form', async (form, answer, expected) => {
    server.enqueue('POST /v1/note', { json: answer });
    const client = form === 'current' ? current() : earlier();
    expect(await client.addNote('conv-1', 'pelanggan VIP')).toEqual(expected);
    expect(server.requests[0]?.json).toEqual({ conversation_id: 'conv-1', note: 'pelanggan VIP' });
  });

  it.each([
    ['current', { success: true, conversation_id: 'conv-1' }],
    ['earlier', { status: 1, message: 'conversation marked' }],
  ] as const)('markNeedHuman, %s form, twice (the repeat succeeds)', async (form, answer) => {
    server.setDefault('POST /v1/conversation/need-human', { json: answer });
    const client = form === 'current' ? current() : earlier();
    await client.markNeedHuman('conv-1');
    await client.markNeedHuman('conv-1');
    expect(server.requestsTo('POST /v1/conversation/need-human').map((r) => r.json)).toEqual([
      { conversation_id: 'conv-1' },
      { conversation_id: 'conv-1' },
    ]);
  });

  it('markNeedHuman treats an "already marked" refusal as success', async () => {
    server.enqueue('POST /v1/conversation/need-human', {
      json: { status: 0, message: 'conversation already need human' },
    });
    await expect(current().markNeedHuman('conv-1')).resolves.toBeUndefined();
  });

  it.each([
    ['current', { status: 1, message: 'Sukses', data: { total: 15 } }, 15],
    ['earlier', { success: true, total: '3' }, 3],
  ] as const)('getNeedHumanTotal, %s form', async (form, answer, total) => {
    server.enqueue('GET /v1/conversation/need-human/total', { json: answer });
    expect(await (form === 'current' ? current() : earlier()).getNeedHumanTotal()).toBe(total);
  });

  it.each([
    ['current', { json: { version: '1.3' } }, '1.3'],
    ['current', { json: { data: { version: 'v1.3' } } }, '1.3'],
    ['current', { text: '1.3' }, '1.3'],
    ['earlier', { json: { version: '1.3' } }, '1.3'],
    ['earlier', { json: { status: 1, data: { version: 'v1.3' } } }, '1.3'],
    ['earlier', { text: 'v1.4\n' }, '1.4'],
  ] as const)('getVersion, %s form, accepts %j', async (form, reply, version) => {
    server.enqueue('GET /version', reply);
    expect(await (form === 'current' ? current() : earlier()).getVersion()).toBe(version);
  });

  it('works under a base URL with a path prefix', async () => {
    server.enqueue('GET /api/version', { json: { version: '1.3' } });
    expect(await current({ baseUrl: `${server.url}/api/` }).getVersion()).toBe('1.3');
    expect(server.requests[0]?.path).toBe('/api/version');
  });
});
