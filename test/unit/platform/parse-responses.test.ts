import { describe, expect, it } from 'vitest';
import {
  parseAck,
  parseHistory,
  parseNeedHumanTotal,
  parseVersion,
} from '../../../src/platform/parse-responses.js';

const json = (value: unknown) => ({ text: JSON.stringify(value), json: value });
const text = (value: string) => ({ text: value, json: undefined });

const currentItem = {
  id: 7,
  message_id: 'm-7',
  conversation_id: 'conv-1',
  sender: 'agent',
  sender_name: 'Aira - AI',
  message: 'Halo kak',
  caption: '',
  message_type: 'text',
  mime_type: 'text/plain',
  sent_at: '2026-11-21 07:00:00',
  delivery_status: 'delivered',
  reply_to_message_id: 'm-6',
};

const earlierItem = {
  id: 3,
  message_id: 'm-3',
  conversation_id: 'conv-1',
  sender: 'user',
  message: 'ini catatan',
  message_type: 'text',
  mime_type: 'text/plain',
  sent_at: '2026-11-21 00:30:00',
  metadata: '{"source":"api","n":1}',
  lock_by_human: 1,
  is_note: 1,
};

describe('parseHistory, current form', () => {
  it('normalises a message', () => {
    const result = parseHistory(
      json({ status: 1, rc: 200, message: 'list message', data: { list: [currentItem], last_id: 7 }, ts: 1 }),
      'current',
      'conv-1',
    );
    expect(result).toEqual({
      ok: true,
      value: {
        lastId: 7,
        messages: [
          {
            id: 7,
            messageId: 'm-7',
            conversationId: 'conv-1',
            sender: 'agent',
            senderName: 'Aira - AI',
            text: 'Halo kak',
            caption: '',
            messageType: 'text',
            mimeType: 'text/plain',
            sentAt: new Date('2026-11-21T00:00:00Z'),
            deliveryStatus: 'delivered',
            replyToMessageId: 'm-6',
            isNote: null,
            lockByHuman: null,
            metadata: null,
          },
        ],
      },
    });
  });

  it('reads a null list as no new messages', () => {
    expect(
      parseHistory(json({ status: 1, rc: 200, data: { list: null, last_id: 0 } }), 'current', 'c'),
    ).toEqual({
      ok: true,
      value: { messages: [], lastId: 0 },
    });
  });

  it('tolerates numbers as strings, nulls, missing optional fields and unknown keys', () => {
    const result = parseHistory(
      json({
        data: {
          list: [
            {
              id: '12',
              message_id: 12,
              sender: 'User',
              sender_name: null,
              message: null,
              caption: null,
              sent_at: '2026-11-21 07:00:00',
              delivery_status: 'SENT',
              reply_to_message_id: '',
              surprise: { nested: true },
            },
          ],
          last_id: '12',
          page: 1,
        },
      }),
      'current',
      'conv-9',
    );
    expect(result.ok && result.value.messages[0]).toMatchObject({
      id: 12,
      messageId: '12',
      conversationId: 'conv-9',
      sender: 'user',
      senderName: null,
      text: '',
      caption: '',
      messageType: null,
      mimeType: null,
      deliveryStatus: 'sent',
      replyToMessageId: null,
    });
  });

  it('maps an unknown delivery status to null', () => {
    const result = parseHistory(
      json({ data: { list: [{ ...currentItem, delivery_status: 'queued' }] } }),
      'current',
      'c',
    );
    expect(result.ok && result.value.messages[0]?.deliveryStatus).toBeNull();
  });

  it('takes lastId from the messages it got', () => {
    const result = parseHistory(
      json({
        data: {
          list: [
            { ...currentItem, id: 4 },
            { ...currentItem, id: 9 },
          ],
          last_id: 50,
        },
      }),
      'current',
      'c',
    );
    expect(result.ok && result.value.lastId).toBe(9);
  });

  it.each([
    ['not JSON', text('<html>oops</html>'), 'the body is not JSON (an HTML page of 17 characters)'],
    [
      'an earlier-form array',
      json({ status: 1, data: [currentItem] }),
      'history answer does not fit the current form: data: Invalid input: expected object, received array',
    ],
    [
      'no data',
      json({ status: 1 }),
      'history answer does not fit the current form: data: Invalid input: expected object, received undefined',
    ],
    [
      'no list',
      json({ data: { last_id: 3 } }),
      'history answer does not fit the current form: data.list: Invalid input: expected array, received undefined',
    ],
    [
      'an item without id',
      json({ data: { list: [{ ...currentItem, id: undefined }] } }),
      'history answer does not fit the current form: data.list.0.id: Invalid input: expected number, received undefined',
    ],
    [
      'a negative id',
      json({ data: { list: [{ ...currentItem, id: -1 }] } }),
      'history answer does not fit the current form: data.list.0.id: Too small: expected number to be >=0',
    ],
    [
      'an unreadable sent_at',
      json({ data: { list: [{ ...currentItem, sent_at: 'kemarin' }] } }),
      'history answer does not fit the current form: data.list.0.sent_at: sent_at "kemarin" is not a WIB YYYY-MM-DD HH:MM:SS time',
    ],
    [
      'no sender',
      json({ data: { list: [{ ...currentItem, sender: undefined }] } }),
      'history answer does not fit the current form: data.list.0.sender: Invalid input: expected string, received undefined',
    ],
  ])('rejects %s', (_name, body, problem) => {
    expect(parseHistory(body, 'current', 'c')).toEqual({ ok: false, problem });
  });
});

describe('parseHistory, earlier form', () => {
  it('normalises a note with flags and metadata', () => {
    const result = parseHistory(
      json({ status: 1, data: [earlierItem], message: 'list message' }),
      'earlier',
      'conv-1',
    );
    expect(result).toEqual({
      ok: true,
      value: {
        lastId: 3,
        messages: [
          {
            id: 3,
            messageId: 'm-3',
            conversationId: 'conv-1',
            sender: 'user',
            senderName: null,
            text: 'ini catatan',
            caption: '',
            messageType: 'text',
            mimeType: 'text/plain',
            sentAt: new Date('2026-11-20T17:30:00Z'),
            deliveryStatus: null,
            replyToMessageId: null,
            isNote: true,
            lockByHuman: true,
            metadata: { source: 'api', n: 1 },
          },
        ],
      },
    });
  });

  it.each([
    ['not JSON', 'not json', null],
    ['an empty string', '', null],
    ['a JSON array', '[1,2]', null],
    ['a JSON number', '42', null],
    ['JSON null', 'null', null],
    ['missing', undefined, null],
    ['an object already', { a: 1 }, { a: 1 }],
  ])('metadata that is %s becomes %j, never an error', (_name, metadata, expected) => {
    const result = parseHistory(json({ status: 1, data: [{ ...earlierItem, metadata }] }), 'earlier', 'c');
    expect(result.ok && result.value.messages[0]?.metadata).toEqual(expected);
  });

  it.each([
    [0, false],
    ['1', true],
    ['0', false],
    [true, true],
    [null, null],
    [undefined, null],
    ['maybe', null],
  ])('is_note %j -> %j', (isNote, expected) => {
    const result = parseHistory(
      json({ status: 1, data: [{ ...earlierItem, is_note: isNote }] }),
      'earlier',
      'c',
    );
    expect(result.ok && result.value.messages[0]?.isNote).toBe(expected);
  });

  it('reads lastId as the highest id (no pagination)', () => {
    const result = parseHistory(
      json({
        status: 1,
        data: [
          { ...earlierItem, id: 5 },
          { ...earlierItem, id: 2 },
        ],
      }),
      'earlier',
      'c',
    );
    expect(result.ok && result.value.lastId).toBe(5);
  });

  it('reads data null as no messages', () => {
    expect(parseHistory(json({ status: 1, data: null }), 'earlier', 'c')).toEqual({
      ok: true,
      value: { messages: [], lastId: 0 },
    });
  });

  it('rejects a current-form answer', () => {
    expect(parseHistory(json({ data: { list: [], last_id: 0 } }), 'earlier', 'c')).toEqual({
      ok: false,
      problem:
        'history answer does not fit the earlier form: data: Invalid input: expected array, received object',
    });
  });
});

describe('parseAck', () => {
  it.each([
    ['current send', { conversation_id: 'c1', success: true }, { conversationId: 'c1' }],
    ['older send', { message_id: 'm1', success: true }, { messageId: 'm1' }],
    ['current note', { message_id: 'm2', success: true }, { messageId: 'm2' }],
    ['earlier', { status: 1, message: 'Sukses' }, {}],
    ['status as string', { status: '1', message: 'ok' }, {}],
    [
      'newer with data',
      { status: 1, message: 'Sukses', data: { message_id: 99, conversation_id: 'c2' } },
      { messageId: '99', conversationId: 'c2' },
    ],
    ['older note', { success: true, note: 'isi' }, {}],
  ])('%s', (_name, body, value) => {
    expect(parseAck(json(body))).toEqual({ ok: true, value });
  });

  it.each([
    [
      'no marker',
      json({ conversation_id: 'c1' }),
      'no success marker (expected "success": true or "status": 1) in a JSON object {conversation_id: string}',
    ],
    ['not JSON', text('OK'), 'the body is not JSON (a text of 2 characters)'],
    ['empty', text(''), 'the body is not JSON (an empty body)'],
    ['an array', json([1]), 'body: Invalid input: expected object, received array'],
  ])('rejects %s', (_name, body, problem) => {
    expect(parseAck(body)).toEqual({ ok: false, problem });
  });
});

describe('parseNeedHumanTotal', () => {
  it.each([
    [{ status: 1, message: 'Sukses', data: { total: 15 } }, 15],
    [{ success: true, total: 4 }, 4],
    [{ status: 1, data: { total: '0' } }, 0],
  ])('%j -> %i', (body, total) => {
    expect(parseNeedHumanTotal(json(body))).toEqual({ ok: true, value: total });
  });

  it.each([
    [{ status: 1, data: {} }, '{status: number, data: object}'],
    [{ data: { total: -1 } }, '{data: object}'],
    [{ data: { total: 1.5 } }, '{data: object}'],
    [{ total: 'many' }, '{total: string}'],
  ])('rejects %j', (body, shape) => {
    expect(parseNeedHumanTotal(json(body))).toEqual({
      ok: false,
      problem: `no non-negative integer total in a JSON object ${shape}`,
    });
  });
});

describe('parseVersion', () => {
  it.each([
    [json({ version: '1.3' }), '1.3'],
    [json({ data: { version: 'v1.3' } }), '1.3'],
    [json({ status: 1, data: { version: '2.0.1' } }), '2.0.1'],
    [json('v1.4'), '1.4'],
    [{ text: '1.3', json: 1.3 }, '1.3'],
    [text('v1.3\n'), '1.3'],
    [text('1.3-beta'), '1.3-beta'],
  ])('%j -> %s', (body, version) => {
    expect(parseVersion(body)).toEqual({ ok: true, value: version });
  });

  it.each([
    [text('<html><body>hello</body></html>'), 'no version in an HTML page of 31 characters'],
    [text(''), 'no version in an empty body'],
    [json({ v: 1 }), 'no version in a JSON object {v: number}'],
    [json({ version: '' }), 'no version in a JSON object {version: string}'],
    [text('OK'), 'no version in a text of 2 characters'],
    [json({ version: 'latest' }), 'no version in a JSON object {version: string}'],
  ])('rejects %j', (body, problem) => {
    expect(parseVersion(body)).toEqual({ ok: false, problem });
  });
});
