import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { backtest, simulate } from '../../../src/record/backtest.js';
import { compareGolden } from '../../../src/record/golden-plans.js';
import { type RecordedEvent, recordedLine } from '../../../src/record/recorded-event.js';
import { makeEvent } from '../../support/make-event.js';

function config(keywords: string, extra = '') {
  return parseConfigText(
    `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
channels:
  - { match: { engine: instagram }, kind: instagram }
reply_window:
  when_closed: [ { note: "window closed" } ]
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ ${keywords} ] } }
    then:
      - need_human: true
      - after: 15m
        unless: agent_reply
        then: [ { note: "no agent reply" } ]
    stop: true
  - name: thanks
    on: message_in
    if: { text: { any_keywords: [ makasih ] } }
    then: [ { reply: { text: "sama-sama" } } ]
${extra}`,
    { fileName: 'rules.yaml', env: {} },
  ).rules;
}

const T0 = Date.parse('2026-11-23T03:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
let seq = 0;

function line(conversationId: string, minutes: number, overrides: Partial<ConversationEvent>): RecordedEvent {
  const now = at(minutes);
  seq += 1;
  const event = makeEvent({
    conversationId,
    messageId: `m${seq}`,
    key: `e|m${seq}`,
    occurredAt: now.toISOString(),
    receivedAt: now.toISOString(),
    ...overrides,
  });
  return recordedLine({
    seq,
    now,
    event,
    facts: { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} },
  });
}

/** Lines with the plans the old rules gave them, as a bridge running the old rules records them. */
function recordedWith(rules: ReturnType<typeof config>, lines: RecordedEvent[]): RecordedEvent[] {
  const horizon = Date.parse(lines[lines.length - 1]?.now ?? '');
  const planned = simulate(rules, lines, horizon).events;
  return lines.map((l) => {
    const p = planned.find((x) => x.eventKey === l.event.key);
    return {
      ...l,
      plan: { matched: p?.matched ?? [], actions: p?.actions ?? [], blocked: p?.blocked ?? [] },
    };
  });
}

const OLD = config('refund, kecewa');
const NEW = config('kecewa, rusak');

const agent = { kind: 'agent_reply' as const, name: 'agent.message_out' };
const lines = [
  line('c-refund', 0, { text: 'mau refund' }), // escalated before, not after
  line('c-rusak', 1, { text: 'barang rusak' }), // escalated after only
  line('c-kecewa', 2, { text: 'saya kecewa' }), // both
  line('c-kecewa', 10, { ...agent, text: 'maaf kak' }), // cancels the timer
  line('c-plain', 3, { text: 'makasih' }), // a reply, unchanged
  line('c-refund', 30, { text: 'halo?' }),
  line('c-rusak', 40, { text: 'halo?' }),
];
const recorded = recordedWith(OLD, lines);

describe('backtest', () => {
  const report = backtest(recorded, NEW);

  it('counts per rule the events matched before and after', () => {
    expect(report.rules).toEqual([
      { rule: 'escalate', before: 2, after: 2 },
      { rule: 'thanks', before: 1, after: 1 },
    ]);
    expect(report.events).toBe(7);
    expect(report.conversations).toBe(4);
    expect(report.changedEvents).toBe(2);
  });

  it('lists actions added and removed, with examples', () => {
    expect(
      report.added.map((a) => [a.rule, a.type, a.count, a.examples.map((e) => e.conversationId)]),
    ).toEqual([
      ['escalate', 'need_human', 1, ['c-rusak']],
      ['escalate', 'timer', 1, ['c-rusak']],
    ]);
    expect(report.removed.map((a) => [a.rule, a.type, a.count, a.examples.map((e) => e.text)])).toEqual([
      ['escalate', 'need_human', 1, ['mau refund']],
      ['escalate', 'timer', 1, ['mau refund']],
    ]);
  });

  it('says which conversations are escalated earlier, later or not at all', () => {
    expect(report.escalations).toEqual([
      { conversationId: 'c-refund', before: at(0).toISOString(), after: null, change: 'no longer' },
      { conversationId: 'c-rusak', before: null, after: at(1).toISOString(), change: 'new' },
    ]);
  });

  it('reports no change for the same rules', () => {
    const same = backtest(recorded, OLD);
    expect(same.changedEvents).toBe(0);
    expect(same.escalations).toEqual([]);
    expect(same.added).toEqual([]);
    expect(same.removed).toEqual([]);
  });

  it('fires a timer when due and cancels it on an unless event', () => {
    const side = simulate(NEW, recorded, Date.parse(recorded[recorded.length - 1]?.now ?? ''));
    const fired = side.timerActions.map((t) => [t.conversationId, t.at, t.action.type]);
    // c-kecewa's timer is cancelled by the agent reply at +10m; c-rusak's fires at +16m.
    expect(fired).toEqual([['c-rusak', at(16).toISOString(), 'note']]);
  });

  it('finds escalation coming later when it moves from the message to a timer', () => {
    const timerOnly = config(
      'refund',
      `  - name: slow
    on: message_in
    if: { text: { any_keywords: [ kecewa ] } }
    then: [ { after: 5m, then: [ { need_human: true } ] } ]
`,
    );
    const r = backtest(recorded, timerOnly, { baseline: OLD });
    expect(r.escalations).toContainEqual({
      conversationId: 'c-kecewa',
      before: at(2).toISOString(),
      after: at(7).toISOString(),
      change: 'later',
    });
  });

  it('counts replies the closed window would block', () => {
    const ig = [
      line('c-ig', 0, { text: 'makasih', channel: { id: 'ig1', name: null, engine: 'instagram' } }),
      // 25 hours later, an AI reply event: no customer message since, the window is closed.
    ];
    const late = recordedWith(OLD, ig);
    const first = late[0] as RecordedEvent;
    const stale = {
      ...first,
      seq: first.seq + 1,
      now: at(25 * 60).toISOString(),
      event: { ...first.event, key: 'e|late', messageId: 'late', occurredAt: at(-25 * 60).toISOString() },
      facts: { ...first.facts, lastCustomerMessageAt: at(-25 * 60).toISOString() },
    };
    const r = backtest([stale], OLD, { baseline: config('x') });
    expect(r.blocked).toEqual([
      { rule: 'thanks', before: 1, after: 1, examples: [expect.objectContaining({ eventKey: 'e|late' })] },
    ]);
  });
});

describe('backtest with a debounced rule (issue 28)', () => {
  const debounced = config(
    'refund',
    `  - name: answer-burst
    on: message_in
    debounce: 2m
    unless: agent_reply
    if: { text: { all_keywords: [ pesanan, "belum sampai" ] } }
    then: [ { reply: { text: "{{burst.count}} pesan" } }, { need_human: true } ]
`,
  );
  const burstLines = [
    line('b-1', 0, { text: 'halo' }),
    line('b-1', 1, { text: 'pesanan saya' }),
    line('b-1', 2, { text: 'belum sampai' }), // one burst of 3: answered at +4m, told with this message
    line('b-1', 10, { text: 'pesanan sudah belum sampai' }), // a burst of its own, at the end: answered at +12m
    line('b-2', 0, { text: 'pesanan belum sampai' }),
    line('b-2', 1, { ...agent, text: 'sudah kami cek' }), // cancels b-2's burst
  ];

  it('regroups the recorded customer messages into bursts and tells each burst with its last message', () => {
    const side = simulate(debounced, burstLines, Date.parse(burstLines[burstLines.length - 1]?.now ?? ''));
    const told = side.events.map((e) => [e.conversationId, e.text, e.matched, e.actions.map((a) => a.id)]);
    expect(told).toEqual([
      ['b-1', 'halo', [], []],
      ['b-1', 'pesanan saya', [], []],
      ['b-1', 'belum sampai', ['answer-burst'], ['answer-burst#0', 'answer-burst#1']],
      ['b-1', 'pesanan sudah belum sampai', ['answer-burst'], ['answer-burst#0', 'answer-burst#1']],
      ['b-2', 'pesanan belum sampai', [], []],
      ['b-2', 'sudah kami cek', [], []],
    ]);
    // Escalated when the burst ended (2 minutes after its last message), not at a message.
    expect(side.escalatedAt.get('b-1')).toBe(at(4).toISOString());
    expect(side.escalatedAt.has('b-2')).toBe(false);
  });

  it('compares a debounced rule with the per-message rule it replaces (--baseline)', () => {
    const perMessage = config(
      'refund',
      `  - name: answer-burst
    on: message_in
    if: { text: { all_keywords: [ pesanan, "belum sampai" ] } }
    then: [ { reply: { text: "1 pesan" } }, { need_human: true } ]
`,
    );
    const r = backtest(burstLines, debounced, { baseline: perMessage });
    expect(r.rules.find((x) => x.rule === 'answer-burst')).toEqual({
      rule: 'answer-burst',
      before: 2,
      after: 2,
    });
    // b-2: answered per message before; the agent's reply cancels the burst after.
    expect(r.escalations).toEqual([
      { conversationId: 'b-1', before: at(10).toISOString(), after: at(4).toISOString(), change: 'earlier' },
      { conversationId: 'b-2', before: at(0).toISOString(), after: null, change: 'no longer' },
    ]);
  });
});

describe('golden plans (--expect)', () => {
  it('agree with themselves and catch a changed plan', () => {
    const before = backtest(recorded, OLD).plans;
    expect(compareGolden(before, before)).toEqual([]);
    const after = backtest(recorded, NEW).plans;
    const mismatches = compareGolden(before, after);
    expect(mismatches.map((m) => m.conversationId).sort()).toEqual(['c-refund', 'c-rusak']);
    expect(mismatches.find((m) => m.conversationId === 'c-refund')?.diff).toEqual([
      '- matched escalate',
      '- need_human [escalate#0]',
      '- timer [escalate#1]',
    ]);
  });
});

describe('first_message in a replay', () => {
  const rules = parseConfigText(
    `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
rules:
  - name: welcome
    on: message_in
    if: { first_message: true }
    then: [ { note: "first message" } ]
`,
    { fileName: 'first.yaml', env: {} },
  ).rules;

  it('is the first customer message of a conversation that starts with another event', () => {
    const ai = line('c-first', 0, { kind: 'ai_reply', name: 'ai.message_generated', text: 'Halo!' });
    const one = line('c-first', 1, { text: 'halo' });
    const two = line('c-first', 2, { text: 'halo lagi' });
    const side = simulate(rules, [ai, one, two], at(2).getTime());
    expect(side.events.map((e) => e.matched)).toEqual([[], ['welcome'], []]);
  });

  it('is not, when the facts of the first recorded event knew an earlier customer message', () => {
    const known = {
      ...line('c-known', 0, { kind: 'ai_reply', name: 'ai.message_generated' }),
      facts: { lastCustomerMessageAt: at(-60).toISOString(), isFirstCustomerMessage: false, onceMarks: {} },
    };
    const side = simulate(rules, [known, line('c-known', 1, { text: 'halo' })], at(1).getTime());
    expect(side.events.map((e) => e.matched)).toEqual([[], []]);
  });
});
