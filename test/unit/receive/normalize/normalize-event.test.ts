import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConversationEventSchema } from '../../../../src/events/conversation-event.js';
import { canonicalJson } from '../../../../src/receive/normalize/canonical-json.js';
import { normalizeEvent } from '../../../../src/receive/normalize/normalize-event.js';
import { WEBHOOK_FIXTURES, webhookFixture } from '../../../fixtures/webhooks/index.js';

const receivedAt = new Date('2026-03-01T08:00:00.000Z');
const normalize = (body: unknown) => normalizeEvent(body, { receivedAt });

/** The documented customer message, with one part replaced by a test. */
const base = () => JSON.parse(webhookFixture('channel-message-in').raw) as Record<string, unknown>;
const withTop = (over: Record<string, unknown>) => ({ ...base(), ...over });
const withMessage = (over: Record<string, unknown>): Record<string, unknown> => {
  const body = base();
  return { ...body, message: { ...(body.message as Record<string, unknown>), ...over } };
};
const withChannel = (engine: unknown) => withMessage({ channel: { id: 'c', name: 'n', engine } });

function eventOf(body: unknown) {
  const result = normalize(body);
  if (!result.ok)
    throw new Error(`expected an event, got ${result.problem.reason}: ${result.problem.message}`);
  return result.event;
}

function problemOf(body: unknown) {
  const result = normalize(body);
  if (result.ok) throw new Error(`expected a problem, got a ${result.event.kind} event`);
  return result.problem;
}

describe('normalizeEvent: every documented variant (fixtures)', () => {
  it.each(WEBHOOK_FIXTURES.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    const result = normalize(JSON.parse(fixture.raw));
    const { expect: expected } = fixture;
    if (expected.outcome === 'queued' || expected.outcome === 'test') {
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      // Every event the normaliser makes passes the canonical contract the worker validates.
      expect(ConversationEventSchema.parse(result.event)).toEqual(result.event);
      if (expected.outcome === 'test') {
        expect(result.event.kind).toBe('test');
        return;
      }
      expect(result.event).toMatchObject(expected.event);
      expect(result.event.receivedAt).toBe(receivedAt.toISOString());
      if (expected.occurredAtIsReceivedAt) expect(result.event.occurredAt).toBe(receivedAt.toISOString());
    } else if (expected.reason === 'unknown_event') {
      expect(result).toMatchObject({ ok: true, event: { kind: 'unknown' } });
    } else {
      expect(result).toMatchObject({ ok: false, problem: { reason: expected.reason } });
    }
  });
});

describe('normalizeEvent: event names', () => {
  it.each([
    ['channel.message_in', 'message_in'],
    ['user.message_in', 'message_in'],
    ['message.incoming', 'message_in'],
    ['ai.message_generated', 'ai_reply'],
    ['agent.message_out', 'agent_reply'],
    ['message.sent', 'message_sent'],
    ['conversation.assigned', 'assigned'],
    ['Channel.Message_In', 'message_in'],
    [' channel.message_in ', 'message_in'],
    ['test', 'test'],
    ['channel.message_reaction', 'unknown'],
    ['conversation.closed', 'unknown'],
  ])('%j is kind %s', (name, kind) => {
    const event = eventOf(withTop({ event: name }));
    expect(event.kind).toBe(kind);
    expect(event.name).toBe(name.trim());
  });
});

describe('normalizeEvent: event time', () => {
  const instant = '2025-01-28T09:20:00.000Z';
  it.each([
    ['Unix seconds', 1738056000, instant],
    ['Unix seconds with a fraction', 1738056000.5, '2025-01-28T09:20:00.500Z'],
    ['milliseconds', 1738056000000, instant],
    ['microseconds', 1738056000000000, instant],
    ['seconds as a string', '1738056000', instant],
    ['milliseconds as a string', '1738056000123', '2025-01-28T09:20:00.123Z'],
    ['ISO with Z', '2025-01-28T09:20:00Z', instant],
    ['ISO with +07:00', '2025-01-28T16:20:00+07:00', instant],
    ['ISO with fraction and Z', '2025-01-28T09:20:00.250Z', '2025-01-28T09:20:00.250Z'],
    ['WIB wall clock', '2025-01-28 16:20:00', instant],
    ['WIB wall clock with T', '2025-01-28T16:20:00', instant],
    ['WIB with spaces around', ' 2025-01-28 16:20:00 ', instant],
  ])('reads %s', (_label, timestamp, expected) => {
    expect(eventOf(withTop({ timestamp })).occurredAt).toBe(expected);
  });

  it.each([
    ['a word', 'kemarin'],
    ['an empty string', ''],
    ['zero', 0],
    ['a negative number', -5],
    ['NaN-like text', 'NaN'],
    ['an impossible date', '2025-02-30 10:00:00'],
    ['an hour past 23', '2025-01-28 25:00:00'],
    ['a number past the microsecond range', 1e17],
    ['an object', { seconds: 1738056000 }],
    ['an array', [1738056000]],
    ['a boolean', true],
    ['null', null],
    ['RFC 2822 text', 'Tue, 28 Jan 2025 09:20:00 GMT'],
  ])('falls back to the receive time for %s', (_label, timestamp) => {
    expect(eventOf(withTop({ timestamp })).occurredAt).toBe(receivedAt.toISOString());
  });

  it('falls back to the receive time when there is no timestamp', () => {
    const { timestamp: _dropped, ...body } = base();
    expect(eventOf(body).occurredAt).toBe(receivedAt.toISOString());
  });

  it('uses message.created_at when the envelope has no timestamp', () => {
    const { timestamp: _dropped, ...body } = withMessage({ created_at: '2025-01-28 16:20:00' });
    expect(eventOf(body).occurredAt).toBe(instant);
  });
});

describe('normalizeEvent: channel engine', () => {
  it.each([
    ['wa', 'whatsapp'],
    ['WA', 'whatsapp'],
    ['whatsapp', 'whatsapp'],
    ['waba', 'whatsapp'],
    ['ig', 'instagram'],
    ['instagram', 'instagram'],
    ['fb', 'facebook'],
    ['facebook', 'facebook'],
    ['messenger', 'facebook'],
    ['webchat', 'webchat'],
    ['web', 'webchat'],
    ['widget', 'webchat'],
    ['telegram', 'telegram'],
    ['slack', 'slack'],
    ['intercom', 'intercom'],
    ['socialchat', 'socialchat'],
    [' Line ', 'line'],
    ['TikTok', 'tiktok'],
    ['', 'unknown'],
    [null, 'unknown'],
    [7, '7'],
  ])('%j becomes %s', (engine, expected) => {
    expect(eventOf(withChannel(engine)).channel.engine).toBe(expected);
  });

  it('is unknown when the message has no channel', () => {
    expect(eventOf(withMessage({ channel: undefined })).channel).toEqual({
      id: null,
      name: null,
      engine: 'unknown',
      rawEngine: null,
    });
  });

  it('reads a bare string channel as the engine', () => {
    expect(eventOf(withMessage({ channel: 'ig' })).channel).toEqual({
      id: null,
      name: null,
      engine: 'instagram',
      rawEngine: 'ig',
    });
  });

  // Issue 12: `wa` and `waba` both normalise to whatsapp; the raw name keeps them apart (QR link
  // or business API), which the reply window needs.
  it.each([
    ['wa', 'wa'],
    [' WABA ', 'waba'],
    ['whatsapp', 'whatsapp'],
    ['', null],
    [null, null],
    [7, '7'],
  ])('keeps the raw engine %j as %j', (engine, raw) => {
    expect(eventOf(withChannel(engine)).channel.rawEngine).toBe(raw);
  });
});

describe('normalizeEvent: the hand-over address', () => {
  // Issue 12: the AI's hand-over, sent to the agent's separate hand-over address.
  it('reads conversation.handover as an assigned event of its conversation', () => {
    const event = eventOf(withTop({ event: 'conversation.handover', need_human: 1 }));
    expect(event).toMatchObject({ kind: 'assigned', name: 'conversation.handover', needHuman: true });
    expect(event.conversationId).not.toBeNull();
  });
});

describe('normalizeEvent: need_human', () => {
  it.each([
    [1, true],
    ['1', true],
    [true, true],
    ['true', true],
    ['TRUE', true],
    [' 1 ', true],
    [0, false],
    ['0', false],
    [false, false],
    ['false', false],
    [null, false],
    [undefined, false],
    [2, false],
    ['ya', false],
  ])('%j is %s', (needHuman, expected) => {
    expect(eventOf(withTop({ need_human: needHuman })).needHuman).toBe(expected);
  });
});

describe('normalizeEvent: identifiers and text', () => {
  it.each([
    ['a string', 'msg_1', 'msg_1'],
    ['a number', 12345, '12345'],
    ['a big number', 9007199254740993n.toString(), '9007199254740993'],
    ['a string with spaces around', '  msg_2 ', 'msg_2'],
  ])('message.id as %s', (_label, id, expected) => {
    const event = eventOf(withMessage({ id }));
    expect(event.messageId).toBe(expected);
    expect(event.key).toBe(`channel.message_in|${expected}`);
  });

  it.each([
    ['a number', 4242, '4242'],
    ['a string', 'conv_x', 'conv_x'],
  ])('conversation_id as %s', (_label, conversationId, expected) => {
    expect(eventOf(withTop({ conversation_id: conversationId })).conversationId).toBe(expected);
  });

  it('reads conversation_id from inside message when the envelope has none', () => {
    const { conversation_id: _dropped, ...body } = withMessage({ conversation_id: 'conv_inner' });
    expect(eventOf(body).conversationId).toBe('conv_inner');
  });

  it('reads message_id beside id', () => {
    const event = eventOf(withMessage({ id: undefined, message_id: 'mid_9' }));
    expect(event.messageId).toBe('mid_9');
  });

  it('reads business from "business" when "bisnis" is absent', () => {
    const event = eventOf(withMessage({ bisnis: undefined, business: { id: 7, name: 'Toko B' } }));
    expect(event.business).toEqual({ id: '7', name: 'Toko B' });
  });

  it('reads a plain-string content as the text', () => {
    expect(eventOf(withMessage({ content: 'halo' }))).toMatchObject({ text: 'halo', contentType: 'text' });
  });

  it('reads a single attachment object and a content url', () => {
    expect(
      eventOf(
        withMessage({
          content: {
            type: 'document',
            attachments: { url: 'https://x/a.pdf', mime_type: 'application/pdf' },
          },
        }),
      ).attachments,
    ).toEqual([{ url: 'https://x/a.pdf', mimeType: 'application/pdf' }]);
    expect(eventOf(withMessage({ content: { type: 'audio', url: 'https://x/v.mp3' } })).attachments).toEqual([
      { url: 'https://x/v.mp3', mimeType: null },
    ]);
  });

  it('lower-cases the content type and says unknown for media without one', () => {
    expect(eventOf(withMessage({ content: { type: 'STICKER' } })).contentType).toBe('sticker');
    expect(eventOf(withMessage({ content: { attachments: [{ url: 'https://x/1' }] } })).contentType).toBe(
      'unknown',
    );
  });
});

describe('normalizeEvent: event key', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is name|body:<sha256 of sorted-keys JSON> without a message id, whatever the key order', () => {
    const body = JSON.parse(webhookFixture('no-message-id').raw) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const one = eventOf(body);
    expect(one.key).toBe(`channel.message_in|body:${sha(canonicalJson(body))}`);
    expect(eventOf(reordered).key).toBe(one.key);
  });

  it('differs between two bodies without message id that differ in any field', () => {
    const body = JSON.parse(webhookFixture('no-message-id').raw) as Record<string, unknown>;
    expect(eventOf(body).key).not.toBe(eventOf({ ...body, timestamp: 1738056001 }).key);
  });
});

describe('normalizeEvent: bodies it cannot understand', () => {
  it.each([
    [
      'an array',
      [1, 2],
      'not_an_object',
      'the body is not a JSON object; the platform sends one object per event',
    ],
    [
      'a string',
      'hello',
      'not_an_object',
      'the body is not a JSON object; the platform sends one object per event',
    ],
    ['null', null, 'not_an_object', 'the body is not a JSON object; the platform sends one object per event'],
    [
      'an empty object',
      {},
      'missing_event_name',
      'the body has no "event" field, so it is not a known webhook event',
    ],
    [
      'an empty event name',
      { event: '', conversation_id: 'c' },
      'missing_event_name',
      'the body has no "event" field, so it is not a known webhook event',
    ],
    [
      'a blank event name',
      { event: '   ', conversation_id: 'c' },
      'missing_event_name',
      'the body has an empty "event" field, so it is not a known webhook event',
    ],
    [
      'an event name that is an object',
      { event: { name: 'x' } },
      'invalid_field',
      '"event" has a value that cannot be read as text or a number; fix the sender, or replay the entry after an upgrade that reads it',
    ],
    [
      'a message event without conversation id',
      { event: 'channel.message_in', message: { id: 'm' } },
      'missing_conversation_id',
      'a "channel.message_in" event needs "conversation_id" (top level or in "message") and this body has none',
    ],
    [
      'message.id as an object',
      { event: 'channel.message_in', conversation_id: 'c', message: { id: { v: 1 } } },
      'invalid_field',
      '"message.id" has a value that cannot be read as text or a number; fix the sender, or replay the entry after an upgrade that reads it',
    ],
    [
      'conversation_id as a boolean',
      { event: 'channel.message_in', conversation_id: true },
      'invalid_field',
      '"conversation_id" has a value that cannot be read as text or a number; fix the sender, or replay the entry after an upgrade that reads it',
    ],
    [
      'an attachment without url',
      {
        event: 'channel.message_in',
        conversation_id: 'c',
        message: { content: { attachments: [{ mime: 'x' }] } },
      },
      'invalid_field',
      '"message.content.attachments.0.url" has a value that cannot be read as text or a number; fix the sender, or replay the entry after an upgrade that reads it',
    ],
  ])('%s', (_label, body, reason, message) => {
    expect(problemOf(body)).toMatchObject({ reason, message });
  });

  it('does not need a conversation id for the test ping or unknown events', () => {
    expect(eventOf({ event: 'test' }).kind).toBe('test');
    expect(eventOf({ event: 'shop.order_created', order: { id: 5 } }).kind).toBe('unknown');
  });

  it('hashes a body nested 200,000 levels deep (the body hash does not recurse)', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(eventOf({ event: 'test', deep }).key).toMatch(/^test\|body:[0-9a-f]{64}$/);
  });

  it('reports a value JSON cannot hold (a bigint) as unreadable instead of throwing', () => {
    const problem = problemOf({ event: 'test', big: 10n });
    expect(problem.reason).toBe('unreadable');
    expect(problem.message).toMatch(/^the body could not be read \(.+\); it is kept as it was received$/);
  });
});
