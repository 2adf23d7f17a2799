import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConversationEventSchema } from '../../../../src/events/conversation-event.js';
import { normalizeEvent } from '../../../../src/receive/normalize/normalize-event.js';

const receivedAt = new Date('2026-03-01T08:00:00.000Z');
const REASONS = [
  'not_an_object',
  'missing_event_name',
  'missing_conversation_id',
  'invalid_field',
  'unreadable',
];
const EVENT_NAMES = [
  'channel.message_in',
  'ai.message_generated',
  'agent.message_out',
  'message.incoming',
  'message.sent',
  'conversation.assigned',
  'user.message_in',
  'test',
  'something.else',
];

/** Either a valid canonical event or a typed problem; nothing else, never a throw. */
function assertTypedResult(body: unknown): void {
  const result = normalizeEvent(body, { receivedAt });
  if (result.ok) {
    expect(ConversationEventSchema.safeParse(result.event).success).toBe(true);
  } else {
    expect(REASONS).toContain(result.problem.reason);
    expect(result.problem.message.length).toBeGreaterThan(0);
  }
}

const dangerousKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty');
const anyKey = fc.oneof(dangerousKey, fc.string({ maxLength: 8 }));
const leaf = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);
/** Values whose objects use prototype-sensitive keys at every level. */
const hostile = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 3 })),
  object: fc.dictionary(anyKey, tie('value'), { maxKeys: 5 }),
})).value;

const fieldValue = fc.oneof(
  leaf,
  fc.array(leaf, { maxLength: 2 }),
  fc.dictionary(anyKey, leaf, { maxKeys: 3 }),
);
/** Bodies shaped like the envelope, with any value in any field. */
const envelopeLike = fc.record(
  {
    event: fc.oneof(fc.constantFrom(...EVENT_NAMES), fieldValue),
    timestamp: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 25 }), fieldValue),
    conversation_id: fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fieldValue),
    need_human: fieldValue,
    message: fc.oneof(
      fieldValue,
      fc.record(
        {
          id: fieldValue,
          sender_name: fieldValue,
          channel: fc.oneof(fieldValue, fc.record({ id: fieldValue, name: fieldValue, engine: fieldValue })),
          bisnis: fieldValue,
          ai: fieldValue,
          agent: fieldValue,
          content: fc.oneof(
            fieldValue,
            fc.record({ type: fieldValue, text: fieldValue, caption: fieldValue, attachments: fieldValue }),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
    data: fieldValue,
  },
  { requiredKeys: [] },
);

describe('normalizeEvent (property-based)', () => {
  it('turns any JSON value into an event or a typed problem, never a throw', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => assertTypedResult(value)),
      { numRuns: 500 },
    );
  });

  it('turns any envelope-shaped body into an event or a typed problem', () => {
    fc.assert(
      fc.property(envelopeLike, (body) => assertTypedResult(JSON.parse(JSON.stringify(body)))),
      { numRuns: 1000 },
    );
  });

  it('never pollutes prototypes, whatever __proto__ / constructor keys the body has', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    fc.assert(
      fc.property(hostile, envelopeLike, (extra, body) => {
        // Through JSON text, as the receiver gets it: __proto__ arrives as an own key.
        const text = JSON.stringify({ ...body, extra, message: body.message, __proto__x: extra });
        const parsed = JSON.parse(text.replace('"__proto__x"', '"__proto__"'));
        const result = normalizeEvent(parsed, { receivedAt });
        expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        if (result.ok) {
          expect(Object.getPrototypeOf(result.event)).toBe(Object.prototype);
          expect(Object.getPrototypeOf(result.event.channel)).toBe(Object.prototype);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('does not take the prototype of a __proto__ key in the envelope or in data', () => {
    const bodies = [
      '{"event":"channel.message_in","conversation_id":"c","__proto__":{"polluted":"yes","conversation_id":"x"}}',
      '{"data":{"__proto__":{"polluted":"yes"},"event":"test"}}',
      '{"event":"channel.message_in","conversation_id":"c","message":{"__proto__":{"id":"evil"},"constructor":{"prototype":{"polluted":"yes"}}}}',
    ];
    for (const text of bodies) {
      const result = normalizeEvent(JSON.parse(text), { receivedAt });
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.event.messageId).toBeNull();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
