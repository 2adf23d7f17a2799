import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationEventSchema } from '../../src/events/conversation-event.js';
import { needsConversation } from '../../src/receive/normalize/event-kind.js';
import { type NormalizeResult, normalizeEvent } from '../../src/receive/normalize/normalize-event.js';
import { WEBHOOK_FIXTURES } from '../fixtures/webhooks/index.js';
import { checkProperty } from './support/check-property.js';
import {
  addKeyAt,
  allPaths,
  assertNotPolluted,
  DANGEROUS_KEYS,
  deepValue,
  hostileString,
  hostileValue,
  hugeString,
  type JsonPath,
  jsonNumber,
  leaf,
  NUMBER_LIKE_STRINGS,
  prototypeSnapshot,
  setAtPath,
  viaJson,
} from './support/hostile-values.js';
import { runsFor } from './support/scale.js';

/**
 * Bodies into the pure normaliser: whatever arrives, the answer is a canonical event that passes
 * ConversationEventSchema or a typed problem; never a throw, never a polluted prototype, and never
 * an outcome that depends on parts of the body the envelope does not define.
 */

const receivedAt = new Date('2026-03-01T08:00:00.000Z');
const RECEIVED_ISO = receivedAt.toISOString();
const REASONS = [
  'not_an_object',
  'missing_event_name',
  'missing_conversation_id',
  'invalid_field',
  'unreadable',
];
/** A problem message is stored with the quarantined body and logged: it must stay short. */
const MAX_PROBLEM_MESSAGE = 2_000;

const FIXTURES = WEBHOOK_FIXTURES.map((f) => ({ name: f.name, body: JSON.parse(f.raw) as unknown }));
const QUEUED = FIXTURES.filter((f) => {
  const result = normalizeEvent(f.body, { receivedAt });
  return result.ok && result.event.kind !== 'test' && result.event.kind !== 'unknown';
});
const fixtureBody = fc.constantFrom(...FIXTURES.map((f) => f.body));
const queuedBody = fc.constantFrom(...QUEUED.map((f) => f.body));

/** A fixture and one of its paths (container or leaf), chosen uniformly. */
const fixtureWithPath = (bodies: fc.Arbitrary<unknown>) =>
  bodies.chain((body) => {
    const paths = allPaths(body);
    return fc.record({ body: fc.constant(body), path: fc.constantFrom(...paths) });
  });
const fixtureWithObjectPath = (bodies: fc.Arbitrary<unknown>) =>
  bodies.chain((body) => {
    const paths = allPaths(body).filter((p) => isPlainObject(valueAt(body, p)));
    return fc.record({ body: fc.constant(body), path: fc.constantFrom(...paths) });
  });

/** Keys the envelope does not define: prototype names, and names no sender uses. */
const unknownKey = fc.oneof(
  fc.constantFrom(...DANGEROUS_KEYS),
  fc.string({ maxLength: 10 }).map((s) => `x-${s}`),
);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueAt(root: unknown, path: JsonPath): unknown {
  let node = root;
  for (const step of path) node = (node as Record<string | number, unknown>)[step];
  return node;
}

/** The property every body must satisfy; returns the result for further checks. */
function normalizeChecked(body: unknown): NormalizeResult {
  const result = normalizeEvent(body, { receivedAt });
  assertNotPolluted();
  if (result.ok) {
    const { event } = result;
    const parsed = ConversationEventSchema.safeParse(event);
    if (!parsed.success) throw new Error(`not a valid ConversationEvent: ${parsed.error.message}`);
    expect(event.receivedAt).toBe(RECEIVED_ISO);
    expect(event.key.startsWith(`${event.name}|`)).toBe(true);
    expect(event.name).not.toBe('');
    if (needsConversation(event.kind)) expect(event.conversationId).not.toBeNull();
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(event.channel)).toBe(Object.prototype);
  } else {
    expect(REASONS).toContain(result.problem.reason);
    expect(result.problem.message.length).toBeGreaterThan(0);
    expect(result.problem.message.length).toBeLessThan(MAX_PROBLEM_MESSAGE);
  }
  return result;
}

/** Two results mean the same: both events alike (but for the body-hash key), or the same problem. */
function expectSameOutcome(actual: NormalizeResult, expected: NormalizeResult, bodyHashKey: boolean): void {
  if (expected.ok && actual.ok) {
    if (bodyHashKey) {
      expect({ ...actual.event, key: '' }).toEqual({ ...expected.event, key: '' });
    } else {
      expect(actual.event).toEqual(expected.event);
    }
    return;
  }
  expect(actual).toEqual(expected);
}

describe('normalizeEvent under hostile bodies', () => {
  let before: string;
  beforeAll(() => {
    before = prototypeSnapshot();
  });
  afterAll(() => {
    // The whole run left the built-in prototypes exactly as they were.
    expect(prototypeSnapshot()).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('any JSON value (random structure, prototype keys at every level) gives an event or a problem', async ({
    task,
  }) => {
    const body = fc.oneof(fc.jsonValue({ maxDepth: 4 }), hostileValue.map(viaJson));
    await checkProperty(task, 'normalize: random JSON values', body, (b) => void normalizeChecked(b), {
      runs: runsFor(12_000),
    });
  });

  it('any JavaScript value, not only what JSON.parse makes (NaN, Infinity, undefined, -0, bigint, Map, null prototypes)', async ({
    task,
  }) => {
    const body = fc.oneof(
      fc.anything({
        maxDepth: 3,
        withBigInt: true,
        withBoxedValues: true,
        withDate: true,
        withMap: true,
        withSet: true,
        withNullPrototype: true,
        withObjectString: true,
        withSparseArray: true,
        withTypedArray: true,
        withUnicodeString: true,
      }),
      fc.record(
        {
          event: fc.oneof(fc.constant('channel.message_in'), fc.anything()),
          conversation_id: fc.anything(),
          timestamp: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, undefined, 1e308),
          message: fc.anything({ maxDepth: 2, withNullPrototype: true }),
        },
        { requiredKeys: [] },
      ),
    );
    await checkProperty(task, 'normalize: any JavaScript value', body, (b) => void normalizeChecked(b), {
      runs: runsFor(4_000),
    });
  });

  it('real fixtures with a wrong type (or a hostile value) in any one field', async ({ task }) => {
    const mutated = fc
      .record({ at: fixtureWithPath(fixtureBody), value: fc.oneof(leaf, hostileValue) })
      .map(({ at, value }) => viaJson(setAtPath(at.body, at.path, value)));
    await checkProperty(
      task,
      'normalize: fixtures, one field mutated',
      mutated,
      (b) => void normalizeChecked(b),
      {
        runs: runsFor(16_000),
      },
    );
  });

  it('envelope-shaped bodies with any value in every documented field', async ({ task }) => {
    const anyField = fc.oneof(leaf, hostileValue);
    const named = fc.oneof(anyField, fc.record({ id: anyField, name: anyField }, { requiredKeys: [] }));
    const content = fc.oneof(
      anyField,
      fc.record(
        {
          type: anyField,
          text: anyField,
          caption: anyField,
          url: anyField,
          mime_type: anyField,
          mimetype: anyField,
          attachments: fc.oneof(
            anyField,
            fc.array(
              fc.record({ url: anyField, mime_type: anyField, mimeType: anyField }, { requiredKeys: [] }),
              {
                maxLength: 3,
              },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    );
    const message = fc.oneof(
      anyField,
      fc.record(
        {
          id: anyField,
          message_id: anyField,
          conversation_id: anyField,
          sender_name: anyField,
          text: anyField,
          caption: anyField,
          channel: fc.oneof(
            anyField,
            fc.record({ id: anyField, name: anyField, engine: anyField, type: anyField }),
          ),
          bisnis: named,
          business: named,
          ai: named,
          agent: named,
          content,
          need_human: anyField,
          timestamp: anyField,
          created_at: anyField,
          sent_at: anyField,
        },
        { requiredKeys: [] },
      ),
    );
    const envelope = fc.record(
      {
        event: fc.oneof(
          fc.constantFrom('channel.message_in', 'ai.message_generated', 'message.incoming', 'test', ' TEST '),
          anyField,
        ),
        timestamp: anyField,
        conversation_id: anyField,
        conversation_label: anyField,
        need_human: anyField,
        message_id: anyField,
        sender_name: anyField,
        message,
        channel: anyField,
        bisnis: named,
        data: fc.oneof(anyField, fc.record({ event: anyField, conversation_id: anyField, message })),
      },
      { requiredKeys: [] },
    );
    await checkProperty(
      task,
      'normalize: envelope, any value per field',
      envelope.map(viaJson),
      (b) => void normalizeChecked(b),
      { runs: runsFor(8_000) },
    );
  });

  it('prototype keys at every level never reach a prototype, and never change what is read', async ({
    task,
  }) => {
    const withPolluters = fc
      .record({
        at: fixtureWithObjectPath(fixtureBody),
        key: fc.constantFrom(...DANGEROUS_KEYS),
        value: hostileValue,
      })
      .map(({ at, key, value }) => ({
        original: at.body,
        mutated: viaJson(addKeyAt(at.body, at.path, key, value)),
      }));
    await checkProperty(
      task,
      'normalize: __proto__/constructor keys',
      withPolluters,
      ({ original, mutated }) => {
        const expected = normalizeEvent(original, { receivedAt });
        const actual = normalizeChecked(mutated);
        expectSameOutcome(actual, expected, !expected.ok || expected.event.messageId === null);
      },
      { runs: runsFor(8_000) },
    );
  });

  it('unknown keys at any level, however deep or large their values, do not change the outcome', async ({
    task,
  }) => {
    const extra = fc
      .record({
        at: fixtureWithObjectPath(queuedBody),
        key: unknownKey,
        value: fc.oneof({ weight: 6, arbitrary: hostileValue }, { weight: 1, arbitrary: deepValue }),
      })
      .map(({ at, key, value }) => ({ original: at.body, mutated: addKeyAt(at.body, at.path, key, value) }));
    await checkProperty(
      task,
      'normalize: unknown keys tolerated',
      extra,
      ({ original, mutated }) => {
        const expected = normalizeEvent(original, { receivedAt });
        const actual = normalizeChecked(mutated);
        expectSameOutcome(actual, expected, expected.ok && expected.event.messageId === null);
      },
      { runs: runsFor(8_000) },
    );
  });

  it('numbers where strings are documented read exactly like the same number written as text', async ({
    task,
  }) => {
    const TEXT_FIELDS: JsonPath[] = [
      ['conversation_id'],
      ['message', 'id'],
      ['message', 'sender_name'],
      ['message', 'channel', 'id'],
      ['message', 'bisnis', 'id'],
      ['message', 'content', 'text'],
      ['conversation_label'],
    ];
    const CHANNEL = QUEUED.find((f) => f.name === 'channel-message-in')?.body;
    if (CHANNEL === undefined) throw new Error('fixture channel-message-in is missing');
    const pair = fc.record({ path: fc.constantFrom(...TEXT_FIELDS), n: jsonNumber });
    await checkProperty(
      task,
      'normalize: numbers as strings',
      pair,
      ({ path, n }) => {
        const asNumber = normalizeChecked(setAtPath(CHANNEL, path, n));
        const asText = normalizeChecked(setAtPath(CHANNEL, path, String(n)));
        expect(asNumber).toEqual(asText);
      },
      { runs: runsFor(3_000) },
    );
  });

  it('timestamps: numbers and numeric strings agree, and anything that is no real instant falls back', async ({
    task,
  }) => {
    const CHANNEL = QUEUED.find((f) => f.name === 'channel-message-in')?.body;
    if (CHANNEL === undefined) throw new Error('fixture channel-message-in is missing');
    const impossibleDate = fc
      .record({
        year: fc.integer({ min: 1971, max: 2099 }),
        month: fc.integer({ min: 1, max: 12 }),
        day: fc.integer({ min: 29, max: 31 }),
        hour: fc.integer({ min: 0, max: 23 }),
        zone: fc.constantFrom('Z', '+07:00', '-03:30', '+0700'),
        separator: fc.constantFrom('T', ' '),
      })
      .filter(({ year, month, day }) => new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day)
      .map(({ year, month, day, hour, zone, separator }) => {
        const date = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
        const time = `${String(hour).padStart(2, '0')}:15:00`;
        // The WIB form (space, no zone) and ISO forms with a zone.
        return separator === ' ' ? `${date} ${time}` : `${date}T${time}${zone}`;
      });
    const sample = fc.oneof(
      fc.record({ kind: fc.constant('number-vs-text' as const), n: jsonNumber }),
      fc.record({ kind: fc.constant('impossible' as const), text: impossibleDate }),
      fc.record({
        kind: fc.constant('nan-ish' as const),
        text: fc.oneof(fc.constantFrom(...NUMBER_LIKE_STRINGS), hostileString),
      }),
    );
    await checkProperty(
      task,
      'normalize: numeric and NaN-ish timestamps',
      sample,
      (s) => {
        if (s.kind === 'number-vs-text') {
          const asNumber = normalizeChecked(setAtPath(CHANNEL, ['timestamp'], s.n));
          const asText = normalizeChecked(setAtPath(CHANNEL, ['timestamp'], String(s.n)));
          expect(asNumber).toEqual(asText);
          return;
        }
        const result = normalizeChecked(setAtPath(CHANNEL, ['timestamp'], s.text));
        // A sender's bad clock is never a rejection.
        expect(result.ok).toBe(true);
        if (result.ok && s.kind === 'impossible') expect(result.event.occurredAt).toBe(RECEIVED_ISO);
      },
      { runs: runsFor(3_000) },
    );
  });

  it('deep nesting (1,000 to 6,000 levels) anywhere in a real body', async ({ task }) => {
    const deep = fc
      .record({ at: fixtureWithPath(fixtureBody), value: deepValue })
      .map(({ at, value }) => setAtPath(at.body, at.path, value));
    await checkProperty(task, 'normalize: deep nesting', deep, (b) => void normalizeChecked(b), {
      runs: runsFor(1_600),
      maxMsPerInput: 1_000,
    });
  });

  it('huge strings (100 KB to 1 MB) in any field', async ({ task }) => {
    const huge = fc
      .record({ at: fixtureWithPath(fixtureBody), value: hugeString })
      .map(({ at, value }) => setAtPath(at.body, at.path, value));
    await checkProperty(task, 'normalize: huge strings', huge, (b) => void normalizeChecked(b), {
      runs: runsFor(400),
      maxMsPerInput: 1_000,
    });
  });
});
