import { describe, expect, it } from 'vitest';
import { webhookIdFor } from '../../../src/forward/forward-event.js';
import {
  CATALOG_URL,
  compareConversation,
  compareForwards,
  emptyTally,
  expectConversation,
  forwardIdOf,
  messageOf,
  type ObservedMessage,
  type SentMessage,
} from '../../faults/support/expectations.js';

const sent = (kind: SentMessage['kind'], n: number, id = `m${n}`): SentMessage => ({
  ...messageOf('c1', kind, n),
  messageId: id,
});
const note = (text: string): ObservedMessage => ({ origin: 'note', text, deliveryStatus: 'sent' });
const reply = (text: string): ObservedMessage => ({ origin: 'api', text, deliveryStatus: 'delivered' });
const AFTER_HOURS = 'Terima kasih Budi! Tim kami kembali pada jam kerja.';

describe('what the example rules must do with the suite traffic', () => {
  it('a complaint: its note with the keyword, need-human, one forward, one timer', () => {
    const message = sent('complaint', 1);
    expect(message.note).toBe("Escalated by escalate-complaints: customer wrote 'kecewa'");
    expect(expectConversation([message], 'open')).toEqual({
      notes: [message.note],
      needHuman: true,
      catalogReplies: 0,
      afterHoursReplies: 0,
      forwardIds: [webhookIdFor('channel.message_in|m1|escalate-complaints#2')],
      timers: 1,
    });
  });

  it('closed hours: one after-hours reply per conversation with any non-complaint, none for complaints only', () => {
    const mixed = [sent('complaint', 0), sent('catalog', 1), sent('neutral', 2), sent('neutral', 3)];
    expect(expectConversation(mixed, 'closed')).toMatchObject({ catalogReplies: 1, afterHoursReplies: 1 });
    expect(expectConversation(mixed, 'open')).toMatchObject({ catalogReplies: 1, afterHoursReplies: 0 });
    expect(expectConversation([sent('complaint', 0)], 'closed')).toMatchObject({ afterHoursReplies: 0 });
  });
});

describe('comparing one conversation', () => {
  const messages = [sent('complaint', 0, 'a'), sent('complaint', 0, 'b'), sent('catalog', 1, 'c')];
  const expected = expectConversation(messages, 'closed');
  const text = messages[0]?.note ?? '';

  it('exactly what was expected: nothing missing, repeated or out of order', () => {
    const tally = emptyTally();
    compareConversation(tally, 'c1', expected, {
      messages: [note(text), note(text), reply(CATALOG_URL), reply(AFTER_HOURS)],
      needHuman: true,
      timers: 2,
    });
    expect(tally).toMatchObject({
      missing: 0,
      repeated: 0,
      outOfOrder: 0,
      notes: 2,
      replies: 2,
      problems: [],
    });
  });

  it.each<[string, ObservedMessage[], boolean, number, { missing: number; repeated: number }, string]>([
    [
      'a repeated note lost',
      [note(text), reply(CATALOG_URL), reply(AFTER_HOURS)],
      true,
      2,
      { missing: 1, repeated: 0 },
      `c1: 1 note "${text}" missing (expected 2, found 1)`,
    ],
    [
      'a catalog reply sent twice',
      [note(text), note(text), reply(CATALOG_URL), reply(CATALOG_URL), reply(AFTER_HOURS)],
      true,
      2,
      { missing: 0, repeated: 1 },
      'c1: 1 catalog reply repeated (expected 1, found 2)',
    ],
    [
      'no need-human mark',
      [note(text), note(text), reply(CATALOG_URL), reply(AFTER_HOURS)],
      false,
      2,
      { missing: 1, repeated: 0 },
      'c1: need-human is false, expected true',
    ],
    [
      'a timer missing',
      [note(text), note(text), reply(CATALOG_URL), reply(AFTER_HOURS)],
      true,
      1,
      { missing: 1, repeated: 0 },
      'c1: 1 escalation timer missing (expected 2, found 1)',
    ],
    [
      'a message nobody asked for',
      [note(text), note(text), reply(CATALOG_URL), reply(AFTER_HOURS), reply('Halo?')],
      true,
      2,
      { missing: 0, repeated: 1 },
      'c1: 1 unexpected message(s) sent',
    ],
  ])('%s', (_name, observed, needHuman, timers, counts, problem) => {
    const tally = emptyTally();
    compareConversation(tally, 'c1', expected, { messages: observed, needHuman, timers });
    expect(tally).toMatchObject(counts);
    expect(tally.problems).toEqual([problem]);
  });

  it('notes in another order than the messages are counted as out of order', () => {
    const first = sent('complaint', 0, 'x');
    const second = sent('complaint', 2, 'y');
    const tally = emptyTally();
    compareConversation(tally, 'c1', expectConversation([first, second], 'open'), {
      messages: [note(second.note ?? ''), note(first.note ?? '')],
      needHuman: true,
      timers: 2,
    });
    expect(tally).toMatchObject({ missing: 0, repeated: 0, outOfOrder: 1 });
  });
});

describe('comparing CRM forwards by webhook-id', () => {
  const a = forwardIdOf({ messageId: 'a' });
  const b = forwardIdOf({ messageId: 'b' });

  it('counts one id per action, resends of the same id, missing and unknown ids, bad signatures', () => {
    expect(
      compareForwards(
        [a, b],
        [
          { webhookId: a, verified: true },
          { webhookId: a, verified: true },
          { webhookId: 'msg_other', verified: false },
        ],
      ),
    ).toEqual({ expected: 2, distinct: 2, total: 3, unknown: 1, missing: 1, resent: 1, unsigned: 1 });
  });
});
