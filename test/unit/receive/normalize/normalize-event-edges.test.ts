import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../src/receive/normalize/canonical-json.js';
import { eventKindOf } from '../../../../src/receive/normalize/event-kind.js';
import { normalizeEvent } from '../../../../src/receive/normalize/normalize-event.js';

// Edges of the normaliser that the documented fixtures do not reach, one property per test.
const receivedAt = new Date('2026-03-01T08:00:00.000Z');
const normalize = (body: unknown) => normalizeEvent(body, { receivedAt });
const MESSAGE = { event: 'channel.message_in', conversation_id: 'c-1' };

function eventOf(body: unknown) {
  const result = normalize(body);
  if (!result.ok) throw new Error(`expected an event, got ${result.problem.message}`);
  return result;
}

function problemOf(body: unknown) {
  const result = normalize(body);
  if (result.ok) throw new Error(`expected a problem, got a ${result.event.kind} event`);
  return result.problem;
}

describe('normalizeEvent: the data wrapper', () => {
  it('unwraps data beside the event name, and keeps the top level first', () => {
    const { event } = eventOf({
      event: 'channel.message_in',
      sender_name: 'Top',
      data: { conversation_id: 'c-9', sender_name: 'Inner' },
    });
    expect(event).toMatchObject({ conversationId: 'c-9', senderName: 'Top' });
  });

  it.each([
    ['a top-level conversation_id', { ...MESSAGE, data: { conversation_id: 'other' } }],
    ['a top-level message', { event: 'test', message: { id: 'm' }, data: { conversation_id: 'other' } }],
  ])('leaves data alone beside %s', (_label, body) => {
    const { event } = eventOf(body);
    expect(event.conversationId).not.toBe('other');
  });

  it('leaves data alone beside a top-level conversation_id, even for keys the top level lacks', () => {
    const { event } = eventOf({ ...MESSAGE, data: { sender_name: 'Inner' } });
    expect(event.senderName).toBeNull();
  });

  it.each([
    ['null', null],
    ['absent', undefined],
  ])('calls an event name that is %s missing', (_label, name) => {
    expect(problemOf({ event: name, conversation_id: 'c' })).toMatchObject({
      reason: 'missing_event_name',
      message: 'the body has no "event" field, so it is not a known webhook event',
    });
  });

  it('leaves data alone when neither level names an event', () => {
    expect(problemOf({ data: { conversation_id: 'c' } }).reason).toBe('missing_event_name');
  });
});

describe('normalizeEvent: what a problem says', () => {
  it('calls an empty event name missing', () => {
    expect(problemOf({ event: '', conversation_id: 'c' }).message).toBe(
      'the body has no "event" field, so it is not a known webhook event',
    );
  });

  it('keeps the readable event name and conversation id of a body with an unreadable field', () => {
    expect(problemOf({ ...MESSAGE, message: { id: {} } })).toMatchObject({
      reason: 'invalid_field',
      eventName: 'channel.message_in',
      conversationId: 'c-1',
    });
    expect(problemOf({ event: { x: 1 }, conversation_id: 42 })).toMatchObject({
      reason: 'invalid_field',
      eventName: null,
      conversationId: null,
    });
  });

  it('names the first three unreadable fields, joined', () => {
    const body = {
      ...MESSAGE,
      message_id: [],
      sender_name: {},
      conversation_label: true,
      message: { id: {} },
    };
    expect(problemOf(body).message).toBe(
      '"conversation_label" has a value that cannot be read as text or a number; ' +
        '"message_id" has a value that cannot be read as text or a number; ' +
        '"sender_name" has a value that cannot be read as text or a number; ' +
        'fix the sender, or replay the entry after an upgrade that reads it',
    );
  });

  it.each([
    ['a NaN', Number.NaN],
    ['an infinity', Number.POSITIVE_INFINITY],
    ['a boolean', false],
    ['an object', { text: 'x' }],
  ])('refuses %s as text', (_label, value) => {
    expect(problemOf({ ...MESSAGE, sender_name: value }).reason).toBe('invalid_field');
  });

  it('reads a bigint as text', () => {
    const result = normalizeEvent({ ...MESSAGE, message_id: 12n, timestamp: 1738056000 }, { receivedAt });
    expect(result.ok && result.event.messageId).toBe('12');
  });
});

describe('normalizeEvent: earlier forms and fallbacks', () => {
  it('reads "" as not given', () => {
    const { event } = eventOf({ ...MESSAGE, sender_name: '', message: { sender_name: '', id: 'm' } });
    expect(event.senderName).toBeNull();
  });

  it('reads a message given as plain text', () => {
    expect(eventOf({ ...MESSAGE, message: 'halo kak' }).event).toMatchObject({
      text: 'halo kak',
      messageId: null,
    });
  });

  it('reads a business given as its bare name', () => {
    expect(eventOf({ ...MESSAGE, bisnis: 'Toko Maju' }).event.business).toEqual({
      id: null,
      name: 'Toko Maju',
    });
  });

  it('takes the listed attachments over a url on the content, and reads mimetype', () => {
    const { event } = eventOf({
      ...MESSAGE,
      message: {
        content: { type: 'image', url: 'https://x/a.png', attachments: [{ url: 'https://x/b.png' }] },
      },
    });
    expect(event.attachments).toEqual([{ url: 'https://x/b.png', mimeType: null }]);
    const single = eventOf({
      ...MESSAGE,
      message: { content: { type: 'image', url: 'https://x/a.png', mimetype: 'image/png' } },
    });
    expect(single.event.attachments).toEqual([{ url: 'https://x/a.png', mimeType: 'image/png' }]);
  });
});

describe('normalizeEvent: the event time fields', () => {
  it.each([
    ['message.timestamp', { timestamp: 1738056000 }],
    ['message.created_at', { created_at: 1738056000 }],
    ['message.sent_at', { sent_at: 1738056000 }],
  ])('reads %s when the envelope has none', (_field, message) => {
    const result = eventOf({ ...MESSAGE, message });
    expect(result.event.occurredAt).toBe('2025-01-28T09:20:00.000Z');
    expect(result).not.toHaveProperty('unreadableTime');
  });

  it.each([
    ['timestamp', { timestamp: 'soon' }, 'soon'],
    ['message.timestamp', { message: { timestamp: { s: 1 } } }, '{"s":1}'],
    ['message.created_at', { message: { created_at: true } }, 'true'],
    ['message.sent_at', { message: { sent_at: 'yesterday' } }, 'yesterday'],
  ])('names %s when it is the first time given and unreadable', (field, over, text) => {
    const result = eventOf({ ...MESSAGE, timestamp: null, ...over });
    expect(result.event.occurredAt).toBe(receivedAt.toISOString());
    expect(result.unreadableTime).toEqual({ field, text });
  });

  it('names only the first unreadable time, skips absent ones, and a readable later one wins', () => {
    const first = eventOf({ ...MESSAGE, timestamp: '', message: { timestamp: 'x', sent_at: 'y' } });
    expect(first.unreadableTime).toEqual({ field: 'message.timestamp', text: 'x' });
    const later = eventOf({ ...MESSAGE, timestamp: 'x', message: { sent_at: 1738056000 } });
    expect(later.event.occurredAt).toBe('2025-01-28T09:20:00.000Z');
    expect(later).not.toHaveProperty('unreadableTime');
    expect(eventOf({ ...MESSAGE, timestamp: null })).not.toHaveProperty('unreadableTime');
  });
});

describe('canonicalJson and eventKindOf as functions of their own', () => {
  it('leaves out what JSON leaves out, and writes undefined alone as null', () => {
    const value = { a: undefined, b: () => 1, c: Symbol('s'), d: 1 };
    expect(canonicalJson(value)).toBe('{"d":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('reads an event name with blanks and capitals', () => {
    expect(eventKindOf('  Channel.Message_In ')).toBe('message_in');
  });
});
