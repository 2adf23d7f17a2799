import { describe, expect, it } from 'vitest';
import {
  comparableText,
  reconcileAgainstHistory,
} from '../../../../src/worker/exactly-once/reconcile-action.js';
import type { HistoryMessage, PlannedAction } from '../../../../src/worker/ports.js';

const t0 = Date.parse('2026-11-21T03:00:00Z');
const msg = (over: Partial<HistoryMessage>): HistoryMessage => ({
  id: 1,
  messageId: 'm1',
  sender: 'agent',
  senderName: 'Toko Maju',
  text: '',
  caption: '',
  isNote: null,
  sentAt: new Date(t0 + 1000),
  ...over,
});
const note: PlannedAction = { id: 'r#0', rule: 'r', type: 'note', text: 'Escalated by r' };
const reply: PlannedAction = {
  id: 'r#1',
  rule: 'r',
  type: 'reply',
  message: { text: 'Terima kasih Budi! Lihat https://x.example/a' },
  replyToMessageId: null,
  once: null,
  window: { applies: false, channelKind: null, hours: 24, closesAt: null },
  whenClosed: [],
};
const media: PlannedAction = {
  ...reply,
  id: 'r#2',
  message: { media: { url: 'https://cdn.example.com/katalog.pdf', type: 'document', caption: 'Katalog' } },
};

describe('reconcileAgainstHistory', () => {
  it.each<[string, PlannedAction, HistoryMessage[], string]>([
    ['note present (sender name api)', note, [msg({ senderName: 'api', text: 'Escalated by r' })], 'present'],
    [
      'note present (earlier form is_note)',
      note,
      [msg({ isNote: true, senderName: null, text: 'escalated  by r' })],
      'present',
    ],
    ['note absent', note, [msg({ senderName: 'api', text: 'something else' })], 'absent'],
    [
      'note text from the customer does not count',
      note,
      [msg({ sender: 'user', text: 'Escalated by r' })],
      'absent',
    ],
    [
      'note older than the start minus skew does not count',
      note,
      [msg({ senderName: 'api', text: 'Escalated by r', sentAt: new Date(t0 - 60_000) })],
      'absent',
    ],
    [
      'reply present, link removed by the platform',
      reply,
      [msg({ text: 'Terima kasih Budi! Lihat' })],
      'present',
    ],
    [
      'reply present verbatim',
      reply,
      [msg({ text: 'Terima kasih Budi! Lihat https://x.example/a' })],
      'present',
    ],
    ['reply absent', reply, [msg({ text: 'Terima kasih!' })], 'absent'],
    [
      'a note with the reply text is not the reply',
      reply,
      [msg({ senderName: 'api', text: 'Terima kasih Budi! Lihat' })],
      'absent',
    ],
    [
      'media reply present',
      media,
      [msg({ text: 'https://cdn.example.com/katalog.pdf', caption: 'Katalog' })],
      'present',
    ],
    ['media reply absent', media, [msg({ text: 'https://cdn.example.com/other.pdf' })], 'absent'],
  ])('%s', (_name, action, history, expected) => {
    expect(reconcileAgainstHistory(action, t0, history, new Set(), 5_000).kind).toBe(expected);
  });

  it('does not count a message another action of the ledger already claimed', () => {
    const history = [msg({ senderName: 'api', text: 'Escalated by r', messageId: 'taken' })];
    expect(reconcileAgainstHistory(note, t0, history, new Set(['taken']), 5_000).kind).toBe('absent');
  });

  // A customer repeated a request: the first note/reply (history id 7) went out a second before this
  // action began; the action recorded history id 7 as its floor, so that message is not taken for it.
  it.each<[string, PlannedAction, HistoryMessage[], string]>([
    [
      'same note sent just before, at or below the floor',
      note,
      [msg({ id: 7, senderName: 'api', text: 'Escalated by r' })],
      'absent',
    ],
    [
      'same note above the floor is ours',
      note,
      [
        msg({ id: 7, senderName: 'api', text: 'Escalated by r' }),
        msg({ id: 9, messageId: 'm9', senderName: 'api', text: 'Escalated by r' }),
      ],
      'present',
    ],
    [
      'same media reply at the floor',
      media,
      [msg({ id: 7, text: 'https://cdn.example.com/katalog.pdf' })],
      'absent',
    ],
  ])('with a history floor: %s', (_name, action, history, expected) => {
    expect(reconcileAgainstHistory(action, t0, history, new Set(), 5_000, 7).kind).toBe(expected);
  });

  it.each<PlannedAction>([
    { id: 'a', rule: 'r', type: 'need_human' },
    { id: 'b', rule: 'r', type: 'forward', destination: 'crm' },
    { id: 'c', rule: 'r', type: 'timer', delayMs: 1, unless: [], actions: [] },
  ])('redoes idempotent action $type', (action) => {
    expect(reconcileAgainstHistory(action, t0, [], new Set(), 5_000).kind).toBe('redo');
  });

  it('compares texts without links, case or extra spaces', () => {
    expect(comparableText('  Halo   https://a.b/c DUNIA ')).toBe('halo dunia');
  });

  // Issue 12: what the platform stores after its link rules (interface, POST /v1/message, behaviour
  // 3), as the emulator's split-links.ts produces it. Each row failed before: the second send
  // happened and the customer got the message twice.
  const textReply = (text: string): PlannedAction => ({ ...reply, message: { text } });
  it.each<[string, string, string[]]>([
    [
      'image link split off before a comma',
      'See https://img.example/a.jpg, thanks',
      ['See, thanks', 'https://img.example/a.jpg'],
    ],
    [
      'image link split off and unreachable link removed',
      'Foto: https://img.example/a.jpg dan katalog https://down.example/k.pdf. Terima kasih!',
      ['Foto: dan katalog. Terima kasih!', 'https://img.example/a.jpg'],
    ],
    ['reachable link kept, trailing dot', 'Lihat https://toko.example/p.', ['Lihat https://toko.example/p.']],
    [
      'only image links: the image messages remain',
      'https://img.example/a.jpg https://img.example/b.png',
      ['https://img.example/a.jpg', 'https://img.example/b.png'],
    ],
    ['a single link is sent as it stands', 'https://img.example/a.jpg', ['https://img.example/a.jpg']],
  ])('finds a reply the platform rewrote: %s', (_name, sent, stored) => {
    const history = stored.map((text, i) => msg({ id: i + 1, messageId: `m${i + 1}`, text }));
    expect(reconcileAgainstHistory(textReply(sent), t0, history, new Set(), 5_000)).toEqual({
      kind: 'present',
      messageId: 'm1',
    });
  });

  it.each<[string, string, string]>([
    ['other words around the same link', 'See https://img.example/a.jpg, thanks', 'See you'],
    ['another link only', 'https://img.example/a.jpg https://img.example/b.png', 'https://img.example/c.jpg'],
  ])('does not take another message for a rewritten reply: %s', (_name, sent, stored) => {
    expect(reconcileAgainstHistory(textReply(sent), t0, [msg({ text: stored })], new Set(), 5_000).kind).toBe(
      'absent',
    );
  });
});

describe('reconcileAgainstHistory with a known run of earlier sends of the same text', () => {
  const since = t0 - 4_000;
  const earlier = msg({
    id: 5,
    messageId: 'm5',
    text: 'Terima kasih Budi! Lihat',
    sentAt: new Date(since + 200),
  });
  const ours = msg({ id: 9, messageId: 'm9', text: 'Terima kasih Budi! Lihat', sentAt: new Date(t0 + 300) });

  it('takes the newest message of the text when there is one more than the earlier sends', () => {
    const verdict = reconcileAgainstHistory(reply, t0, [ours, earlier], new Set(), 5_000, undefined, {
      since,
      count: 1,
    });
    expect(verdict).toEqual({ kind: 'present', messageId: 'm9' });
  });

  it('finds it absent when the only message of the text is the earlier send (the collision this guards)', () => {
    expect(
      reconcileAgainstHistory(reply, t0, [earlier], new Set(), 5_000, undefined, { since, count: 1 }),
    ).toEqual({ kind: 'absent' });
  });

  it("ignores messages of the text before the run began, and the customer's", () => {
    const before = msg({
      id: 2,
      messageId: 'm2',
      text: 'Terima kasih Budi! Lihat',
      sentAt: new Date(since - 6_000),
    });
    const customer = msg({ id: 10, messageId: 'm10', sender: 'user', text: 'Terima kasih Budi! Lihat' });
    expect(
      reconcileAgainstHistory(reply, t0, [before, earlier, customer], new Set(), 5_000, undefined, {
        since,
        count: 1,
      }),
    ).toEqual({ kind: 'absent' });
  });

  it('counts claimed messages too: the run already counts them', () => {
    const verdict = reconcileAgainstHistory(
      note,
      t0,
      [
        msg({
          id: 3,
          messageId: 'n3',
          senderName: 'api',
          text: 'Escalated by r',
          sentAt: new Date(since + 10),
        }),
        msg({ id: 4, messageId: 'n4', senderName: 'api', text: 'Escalated by r', sentAt: new Date(t0 + 10) }),
      ],
      new Set(['n3']),
      5_000,
      undefined,
      { since, count: 1 },
    );
    expect(verdict).toEqual({ kind: 'present', messageId: 'n4' });
  });
});
