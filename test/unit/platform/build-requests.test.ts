import { describe, expect, it } from 'vitest';
import {
  buildAddNote,
  buildGetMessages,
  buildGetNeedHumanTotal,
  buildGetVersion,
  buildMarkNeedHuman,
  buildSendMessage,
  type SendMessageInput,
  sliceHistory,
} from '../../../src/platform/build-requests.js';
import { resolveClientOptions } from '../../../src/platform/client-options.js';
import { PlatformError } from '../../../src/platform/platform-error.js';
import type { PlatformMessage } from '../../../src/platform/platform-message.js';

const current = resolveClientOptions({
  baseUrl: 'https://api.example.com',
  form: 'current',
  auth: { scheme: 'headers', businessId: 'biz', secret: 's' },
});
const earlier = resolveClientOptions({
  baseUrl: 'https://api.example.com',
  form: 'earlier',
  auth: { scheme: 'bearer-secret', businessId: 'biz', secret: 's' },
});

const image = { url: 'https://cdn.example.com/a.jpg', type: 'image', mimeType: 'image/jpeg' } as const;

function rejection(build: () => unknown): PlatformError {
  try {
    build();
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error('expected a VALIDATION error');
}

describe('buildSendMessage', () => {
  it('current form: text', () => {
    const request = buildSendMessage(current, {
      conversationId: 'c1',
      text: 'Halo',
      replyToMessageId: 'm-1',
    });
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/message',
      safety: 'creates',
      operation: 'sendMessage',
    });
    expect(request.json).toEqual({ conversation_id: 'c1', text: 'Halo', reply_to_message_id: 'm-1' });
    expect(request.headers).toEqual({ business: 'biz', secret: 's' });
  });

  it('current form: media with text drops the text and spells mime_type', () => {
    const request = buildSendMessage(current, {
      conversationId: 'c1',
      text: 'ignored by the platform',
      media: { ...image, name: 'a.jpg', caption: 'lihat', thumbnail: 'https://cdn.example.com/t.jpg' },
    });
    expect(request.json).toEqual({
      conversation_id: 'c1',
      media: {
        url: 'https://cdn.example.com/a.jpg',
        type: 'image',
        mime_type: 'image/jpeg',
        name: 'a.jpg',
        caption: 'lihat',
        thumbnail: 'https://cdn.example.com/t.jpg',
      },
    });
  });

  it('current form: media alone, mime type normalised to lower case', () => {
    const request = buildSendMessage(current, {
      conversationId: 'c1',
      media: { ...image, mimeType: 'IMAGE/PNG' },
    });
    expect(request.json).toEqual({
      conversation_id: 'c1',
      media: { ...image, mimeType: undefined, mime_type: 'image/png' },
    });
  });

  it('earlier form: text plus media with a free mimetype; no reply_to_message_id', () => {
    const request = buildSendMessage(earlier, {
      conversationId: 'c1',
      text: 'Halo',
      media: { url: 'https://cdn.example.com/a.gif', type: 'image', mimeType: 'image/gif' },
      replyToMessageId: 'm-1',
    });
    expect(request.json).toEqual({
      conversation_id: 'c1',
      text: 'Halo',
      media: { url: 'https://cdn.example.com/a.gif', type: 'image', mimetype: 'image/gif' },
    });
    expect(request.headers).toEqual({ authorization: 'Bearer s' });
  });

  it.each([
    ['msword', 'application/msword'],
    ['avi', 'video/x-msvideo'],
    ['wav', 'audio/wav'],
    ['pdf', 'application/pdf'],
  ])('earlier form accepts a free MIME type (%s)', (_name, mimeType) => {
    const request = buildSendMessage(earlier, {
      conversationId: 'c1',
      text: 'x',
      media: { url: 'https://cdn.example.com/f', type: 'document', mimeType },
    });
    expect((request.json as { media: Record<string, unknown> }).media.mimetype).toBe(mimeType);
  });

  const media = (override: Record<string, unknown>) =>
    ({ ...image, ...override }) as SendMessageInput['media'];
  it.each<[string, 'current' | 'earlier', SendMessageInput, string]>([
    ['no conversation id', 'current', { conversationId: '', text: 'x' }, 'conversationId is required'],
    ['a blank conversation id', 'current', { conversationId: '  ', text: 'x' }, 'conversationId is required'],
    ['neither text nor media', 'current', { conversationId: 'c1' }, 'text or media is required'],
    [
      'blank text and no media',
      'current',
      { conversationId: 'c1', text: '   ' },
      'text or media is required',
    ],
    [
      'no text in the earlier form',
      'earlier',
      { conversationId: 'c1', media: image },
      'text is required in the earlier form',
    ],
    [
      'an http media URL',
      'current',
      { conversationId: 'c1', media: media({ url: 'http://cdn.example.com/a.jpg' }) },
      'media.url: must be an https URL that the platform can reach publicly',
    ],
    [
      'a relative media URL',
      'current',
      { conversationId: 'c1', media: media({ url: '/a.jpg' }) },
      'media.url: must be an https URL that the platform can reach publicly',
    ],
    [
      'a data: media URL',
      'earlier',
      { conversationId: 'c1', text: 'x', media: media({ url: 'data:image/png;base64,AAAA' }) },
      'media.url: must be an https URL that the platform can reach publicly',
    ],
    [
      'a thumbnail that is not a URL',
      'current',
      { conversationId: 'c1', media: media({ thumbnail: 't.jpg' }) },
      'media.thumbnail: must be an http(s) URL',
    ],
    [
      'a data: thumbnail',
      'earlier',
      { conversationId: 'c1', text: 'x', media: media({ thumbnail: 'data:image/png;base64,AAAA' }) },
      'media.thumbnail: must be an http(s) URL',
    ],
    [
      'a bad media type',
      'current',
      { conversationId: 'c1', media: media({ type: 'sticker' }) },
      'media.type must be one of image, video, audio, document',
    ],
    [
      'a bad media type (earlier)',
      'earlier',
      { conversationId: 'c1', text: 'x', media: media({ type: 'file' }) },
      'media.type must be one of image, video, audio, document',
    ],
    [
      'image/gif in the current form',
      'current',
      { conversationId: 'c1', media: media({ mimeType: 'image/gif' }) },
      'media.mimeType must be one of image/jpeg, image/png, video/mp4, audio/mp3, text/plain in the current form',
    ],
    [
      'application/pdf in the current form',
      'current',
      { conversationId: 'c1', media: media({ type: 'document', mimeType: 'application/pdf' }) },
      'media.mimeType must be one of image/jpeg, image/png, video/mp4, audio/mp3, text/plain in the current form',
    ],
    [
      'a mime type that is not type/subtype (earlier)',
      'earlier',
      { conversationId: 'c1', text: 'x', media: media({ mimeType: 'gif' }) },
      'media.mimeType must look like type/subtype, e.g. image/gif',
    ],
    [
      'an empty mime type (earlier)',
      'earlier',
      { conversationId: 'c1', text: 'x', media: media({ mimeType: '' }) },
      'media.mimeType must look like type/subtype, e.g. image/gif',
    ],
    [
      'an unknown media key',
      'current',
      { conversationId: 'c1', media: media({ size: 10 }) },
      'media: Unrecognized key: "size"',
    ],
    [
      'a media name that is not a string',
      'current',
      { conversationId: 'c1', media: media({ name: 5 }) },
      'media.name: Invalid input: expected string, received number',
    ],
    [
      'a blank replyToMessageId',
      'current',
      { conversationId: 'c1', text: 'x', replyToMessageId: '' },
      'replyToMessageId must not be empty',
    ],
  ])('rejects %s before sending', (_name, form, input, detail) => {
    const error = rejection(() => buildSendMessage(form === 'current' ? current : earlier, input));
    expect(error.code).toBe('VALIDATION');
    expect(error.attempts).toBe(0);
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      `platform sendMessage (POST /v1/message) failed [VALIDATION, not sent]: ${detail}; fix the request parameters; repeating the same request will fail again`,
    );
  });
});

describe('buildGetMessages', () => {
  it('current form sends limit and last_id', () => {
    const request = buildGetMessages(current, 'conv/1', { limit: 20, lastId: 5 });
    expect(request).toMatchObject({
      method: 'GET',
      path: '/v1/message/conv%2F1',
      searchParams: { limit: '20', last_id: '5' },
    });
    expect(request.headers).toEqual({ business: 'biz', secret: 's' });
  });

  it('current form without options sends no query', () => {
    expect(buildGetMessages(current, 'c1').searchParams).toEqual({});
  });

  it('earlier form sends no query and adds merchant_id/secret_key', () => {
    const request = buildGetMessages(earlier, 'c1', { limit: 20, lastId: 5 });
    expect(request.searchParams).toBeUndefined();
    expect(request.window).toEqual({ limit: 20, lastId: 5 });
    expect(request.headers).toEqual({ authorization: 'Bearer s', merchant_id: 'biz', secret_key: 's' });
  });

  it.each([
    ['an empty id', '', {}, 'conversationId is required'],
    ['a negative limit', 'c1', { limit: -1 }, 'limit must be a non-negative integer'],
    ['a fractional lastId', 'c1', { lastId: 1.5 }, 'lastId must be a non-negative integer'],
    ['an unknown option', 'c1', { after: 3 }, 'Unrecognized key: "after"'],
  ])('rejects %s', (_name, id, options, detail) => {
    const error = rejection(() => buildGetMessages(current, id, options as never));
    expect(error.code).toBe('VALIDATION');
    expect(error.message).toContain(`[VALIDATION, not sent]: ${detail};`);
  });
});

describe('sliceHistory', () => {
  const message = (id: number) => ({ id }) as PlatformMessage;
  const page = { messages: [1, 2, 3, 4, 5].map(message), lastId: 5 };

  it.each([
    [{}, [1, 2, 3, 4, 5], 5],
    [{ lastId: 2 }, [3, 4, 5], 5],
    [{ lastId: 2, limit: 2 }, [3, 4], 4],
    [{ limit: 0 }, [1, 2, 3, 4, 5], 5],
    [{ lastId: 9 }, [], 9],
  ])('%j -> ids %j, lastId %i', (window, ids, lastId) => {
    const sliced = sliceHistory(page, window);
    expect(sliced.messages.map((m) => m.id)).toEqual(ids);
    expect(sliced.lastId).toBe(lastId);
  });

  it('never moves the cursor back on an empty page (platform last_id 0)', () => {
    expect(sliceHistory({ messages: [], lastId: 0 }, { lastId: 42 })).toEqual({ messages: [], lastId: 42 });
  });
});

describe('the other calls', () => {
  it('addNote', () => {
    const request = buildAddNote(current, 'c1', 'catatan');
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/note',
      safety: 'creates',
      json: { conversation_id: 'c1', note: 'catatan' },
    });
  });

  it.each([
    ['', 'x', 'conversationId is required'],
    ['c1', '', 'note must not be empty'],
    ['c1', ' \n', 'note must not be empty'],
  ])('addNote(%j, %j) is refused: %s', (id, note, detail) => {
    expect(rejection(() => buildAddNote(current, id, note)).message).toContain(
      `[VALIDATION, not sent]: ${detail};`,
    );
  });

  it('markNeedHuman', () => {
    expect(buildMarkNeedHuman(earlier, 'c1')).toMatchObject({
      method: 'POST',
      path: '/v1/conversation/need-human',
      safety: 'idempotent',
      json: { conversation_id: 'c1' },
    });
    expect(rejection(() => buildMarkNeedHuman(earlier, '')).message).toContain('conversationId is required');
  });

  it('getNeedHumanTotal and getVersion', () => {
    expect(buildGetNeedHumanTotal(current)).toMatchObject({
      method: 'GET',
      path: '/v1/conversation/need-human/total',
    });
    expect(buildGetVersion(current)).toMatchObject({ method: 'GET', path: '/version', safety: 'idempotent' });
  });
});
