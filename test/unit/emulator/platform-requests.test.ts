import { describe, expect, it } from 'vitest';
import {
  parseCursorParam,
  parseNeedHumanRequest,
  parseNoteRequest,
  parseSendRequest,
} from '../../../src/emulator/platform-requests.js';

const INVALID = 'Data tidak valid. Mohon periksa kembali parameter dan header';

describe('parseSendRequest', () => {
  it.each([
    ['current', null, INVALID],
    ['current', 'text', INVALID],
    ['current', {}, 'conversation_id is required'],
    ['current', { conversation_id: 'c', text: 5 }, INVALID],
    ['current', { conversation_id: 'c', media: 'https://x' }, INVALID],
    [
      'current',
      { conversation_id: 'c', media: { url: 'nope', type: 'image' } },
      'media url is required and must be an https address',
    ],
    [
      'current',
      { conversation_id: 'c', media: { url: 'http://a/b.jpg', type: 'image' } },
      'media url is required and must be an https address',
    ],
    [
      'current',
      { conversation_id: 'c', media: { url: 'https://a/b.jpg', type: 'image', thumbnail: 'b-thumb.jpg' } },
      'media thumbnail must be an http(s) URI',
    ],
    [
      'earlier',
      {
        conversation_id: 'c',
        text: 'x',
        media: { url: 'https://a/b.jpg', type: 'image', thumbnail: 'ftp://a/b-thumb.jpg' },
      },
      'media thumbnail must be an http(s) URI',
    ],
    ['current', { conversation_id: 'c', reply_to_message_id: 3, text: 'x' }, INVALID],
    ['current', { conversation_id: 'c', reply_to_message_id: '', text: 'x' }, INVALID],
    ['current', { conversation_id: 'c', reply_to_message_id: ' ', text: 'x' }, INVALID],
    ['earlier', { conversation_id: 'c', text: '' }, INVALID],
    [
      'earlier',
      { conversation_id: 'c', text: 'x', media: { url: 'https://a/b', type: 'image', mimetype: '' } },
      'media mime type not supported',
    ],
    ...(['gif', 'image/', '/gif', 'image gif', 'image/gif/x'] as const).map(
      (mimetype) =>
        [
          'earlier',
          { conversation_id: 'c', text: 'x', media: { url: 'https://a/b', type: 'image', mimetype } },
          'media mime type not supported',
        ] as const,
    ),
  ] as const)('%s form: %j -> %s', (form, body, errorMsg) => {
    expect(parseSendRequest(form, body)).toEqual({ ok: false, errorMsg });
  });

  it('keeps the conversation id as sent (it is opaque) and defaults the MIME type per media type', () => {
    const parsed = parseSendRequest('current', {
      conversation_id: ' c1 ',
      media: { url: 'https://a/b.mp4', type: 'video' },
    });
    expect(parsed).toEqual({
      ok: true,
      value: {
        conversationId: ' c1 ',
        content: { kind: 'media', type: 'video', url: 'https://a/b.mp4', mimeType: 'video/mp4', caption: '' },
        replyToMessageId: null,
      },
    });
  });

  it('treats null text and null media as absent (current form)', () => {
    expect(parseSendRequest('current', { conversation_id: 'c', text: 'hi', media: null })).toMatchObject({
      ok: true,
      value: { content: { kind: 'text', text: 'hi' } },
    });
  });
});

describe('parseNoteRequest and parseNeedHumanRequest', () => {
  it.each([
    [{ note: 'x' }, 'conversation_id is required'],
    [{ conversation_id: null, note: 'x' }, 'conversation_id is required'],
    [{ conversation_id: 'c', note: 7 }, 'note is required'],
    [[], INVALID],
  ])('note %j -> %s', (body, errorMsg) => {
    expect(parseNoteRequest(body)).toEqual({ ok: false, errorMsg });
  });

  it('keeps the note text as sent', () => {
    expect(parseNoteRequest({ conversation_id: 'c', note: '  spaced  ' })).toEqual({
      ok: true,
      value: { conversationId: 'c', note: '  spaced  ' },
    });
  });

  it('need-human needs a conversation id', () => {
    expect(parseNeedHumanRequest({ conversation_id: '' })).toEqual({
      ok: false,
      errorMsg: 'conversation_id is required',
    });
    expect(parseNeedHumanRequest({ conversation_id: 'c' })).toEqual({
      ok: true,
      value: { conversationId: 'c' },
    });
  });
});

describe('parseCursorParam', () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['42', 42],
    ['-1', undefined],
    ['1e3', undefined],
    ['abc', undefined],
    [['1', '2'], undefined],
    ['9999999999999999', undefined],
  ])('%j -> %j', (value, expected) => {
    expect(parseCursorParam(value)).toBe(expected);
  });
});
