import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import {
  addToBurst,
  BURST_TEXT_LIMITS,
  burstText,
  groupBursts,
  startBurst,
} from '../../../src/rules/burst.js';
import { planBursts } from '../../../src/rules/burst-plan.js';
import type { CompiledRules } from '../../../src/rules/compile-rules.js';
import { evaluateBurstRule, evaluateRules } from '../../../src/rules/evaluate-rules.js';
import type { ConversationFacts } from '../../../src/rules/plan.js';
import { makeEvent } from '../../support/make-event.js';

const HEADER = `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
channels:
  - { match: { engine: whatsapp, channel_id: ch_waba_1 }, kind: whatsapp_api }
reply_window:
  applies_to: [ whatsapp_api ]
  when_closed: [ { note: "closed for {{rule.name}}" } ]
`;

function rulesFrom(rulesYaml: string): CompiledRules {
  return parseConfigText(`${HEADER}rules:\n${rulesYaml}`, { fileName: 'test.yaml', env: {} }).rules;
}

function problemsOf(rulesYaml: string): string[] {
  try {
    rulesFrom(rulesYaml);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => i.message);
    throw error;
  }
  return [];
}

const T0 = Date.parse('2026-11-23T03:15:00.000Z');
const noFacts: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};

/** A customer message received `ms` after T0. */
function message(text: string, ms: number, overrides: Partial<ConversationEvent> = {}): ConversationEvent {
  const at = new Date(T0 + ms).toISOString();
  return makeEvent({ text, messageId: `m-${ms}`, occurredAt: at, receivedAt: at, ...overrides });
}

const ANSWER = `  - name: answer-once
    on: message_in
    debounce: 2s
    if: { text: { all_keywords: [pesanan, "belum sampai"] } }
    then:
      - reply: { text: "Kami cek pesanan Anda ({{burst.count}} pesan sejak {{burst.first_at}}): {{burst.text}}" }
`;

describe('debounce: in the rules language', () => {
  it.each([
    [
      'max_wait shorter than debounce',
      '    debounce: 20s\n    max_wait: 10s\n',
      'rules.0.max_wait: max_wait: 10s is shorter than debounce: 20s: a burst would end before the customer could be quiet for 20s; give max_wait at least the debounce (default 5 × debounce)',
    ],
    [
      'a rule on another kind',
      '    debounce: 20s\n',
      "rules.0.on: debounce: groups the customer's messages: the rule must be on: message_in alone, not message_in, agent_reply",
      '[message_in, agent_reply]',
    ],
    [
      'debounce 0',
      '    debounce: 0s\n',
      'rules.0.debounce: debounce: 0 would not wait for the next message: give a duration above 0 (e.g. debounce: 20s)',
    ],
    [
      'debounce longer than an hour',
      '    debounce: 2h\n',
      'rules.0.debounce: debounce: 2h is longer than 1h: to act after a long silence use a timer (after:, unless: message_in)',
    ],
    [
      'max_wait without debounce',
      '    max_wait: 2m\n',
      'rules.0.max_wait: max_wait: belongs to a debounced rule: add debounce: DURATION',
    ],
    [
      'unless without debounce',
      '    unless: agent_reply\n',
      "rules.0.unless: unless: on a rule cancels its burst and needs debounce: DURATION (a timer's unless: goes beside its after: in then:)",
    ],
    [
      'unless message_in',
      '    debounce: 5s\n    unless: [agent_reply, message_in]\n',
      'rules.0.unless: unless: message_in cannot cancel a burst: a customer message joins it; name other kinds (e.g. agent_reply)',
    ],
    [
      'stop on a debounced rule',
      '    debounce: 5s\n    stop: true\n',
      'rules.0.stop: stop: has no effect on a debounced rule: it is evaluated on its own, once per burst; remove stop',
    ],
  ])('refuses %s with a clear message', (_what, fields, message, on = 'message_in') => {
    const problems = problemsOf(`  - name: r\n    on: ${on}\n${fields}    then: [ { note: "x" } ]\n`);
    expect(problems).toEqual([message]);
  });

  it('refuses {{burst.*}} in a rule without debounce, naming the field', () => {
    expect(
      problemsOf('  - name: r\n    on: message_in\n    then: [ { note: "{{burst.count}}" } ]\n'),
    ).toEqual([
      'rules.0.then.0.note: {{burst.count}} needs a debounced rule (debounce: DURATION on a message_in rule)',
    ]);
  });

  it('defaults max_wait to 5 × debounce and keeps unless', () => {
    const rules = rulesFrom(
      '  - name: r\n    on: message_in\n    debounce: 20s\n    unless: agent_reply\n    then: [ { note: "x" } ]\n',
    );
    expect(rules.rules[0]?.burst).toEqual({
      debounceMs: 20_000,
      maxWaitMs: 100_000,
      unless: ['agent_reply'],
    });
    expect(rules.bursts).toEqual([0]);
  });

  it('never evaluates a debounced rule per message, and says the message joins its burst', () => {
    const rules = rulesFrom(
      `${ANSWER}  - name: per-message\n    on: message_in\n    then: [ { note: "seen" } ]\n`,
    );
    const plan = evaluateRules(rules, message('pesanan saya belum sampai', 0), noFacts, new Date(T0));
    expect(plan.matched.map((m) => m.rule)).toEqual(['per-message']);
    expect(plan.outcomes[0]).toMatchObject({
      rule: 'answer-once',
      status: 'not_matched',
      debounced: true,
      reason:
        "debounced (debounce 2s, max_wait 10s): this message joins the rule's burst, evaluated once when the burst ends",
    });
  });
});

describe('a burst as its rule sees it', () => {
  const rules = rulesFrom(ANSWER);
  const rule = rules.rules[0];
  if (!rule) throw new Error('no rule');
  const fragments = [
    message('halo', 0),
    message('mau tanya', 400),
    message('pesanan saya belum sampai', 900),
  ];
  const burst = fragments.slice(1).reduce(addToBurst, startBurst(fragments[0] as ConversationEvent));

  it('text conditions read the joined text: all_keywords holds across messages', () => {
    const plan = evaluateBurstRule(rules, rule, burst, noFacts, new Date(T0 + 2_900));
    expect(plan.matched.map((m) => m.rule)).toEqual(['answer-once']);
    expect(plan.outcomes[0]?.reason).toBe(
      "burst of 3 message(s): text has keywords 'pesanan', 'belum sampai'",
    );
    expect(plan.actions).toMatchObject([
      {
        id: 'answer-once#0',
        type: 'reply',
        message: {
          text: 'Kami cek pesanan Anda (3 pesan sejak 2026-11-23T03:15:00.000Z): halo\nmau tanya\npesanan saya belum sampai',
        },
      },
    ]);
  });

  it('a phrase split between two messages still matches (the texts are joined with a newline)', () => {
    const split = addToBurst(startBurst(message('pesanan saya belum', 0)), message('sampai', 300));
    expect(burstText(split)).toBe('pesanan saya belum\nsampai');
    expect(evaluateBurstRule(rules, rule, split, noFacts, new Date(T0 + 2_300)).matched).toHaveLength(1);
  });

  it('without the keywords anywhere in the burst, the rule does not match', () => {
    const other = addToBurst(startBurst(message('halo', 0)), message('pesanan sudah sampai', 300));
    const plan = evaluateBurstRule(rules, rule, other, noFacts, new Date(T0 + 2_300));
    expect(plan.matched).toEqual([]);
    expect(plan.outcomes[0]?.reason).toBe(
      'burst of 2 message(s): text lacks the keywords [belum sampai] of all_keywords',
    );
  });

  it('a regex runs on the joined text; has_media holds when any message had media; event is the last message', () => {
    const regexRules = rulesFrom(`  - name: order
    on: message_in
    debounce: 2s
    if: { has_media: true, text: { regex: "(?m)^order \\\\d+$" } }
    then: [ { reply: { text: "{{event.text}}", reply_to_message: true } } ]
`);
    const orderRule = regexRules.rules[0];
    if (!orderRule) throw new Error('no rule');
    const photo = message('', 0, {
      contentType: 'image',
      attachments: [{ url: 'https://x/y.jpg', mimeType: null }],
    });
    const withMedia = addToBurst(startBurst(photo), message('order 42', 500, { messageId: 'last' }));
    const plan = evaluateBurstRule(regexRules, orderRule, withMedia, noFacts, new Date(T0 + 2_500));
    expect(plan.matched).toHaveLength(1);
    expect(plan.actions).toMatchObject([{ message: { text: 'order 42' }, replyToMessageId: 'last' }]);
    const noMedia = addToBurst(startBurst(message('x', 0)), message('order 42', 500));
    expect(evaluateBurstRule(regexRules, orderRule, noMedia, noFacts, new Date(T0 + 2_500)).matched).toEqual(
      [],
    );
  });

  it("a burst's reply goes through the reply window like any reply: closed, when_closed is planned instead", () => {
    const waba = { id: 'ch_waba_1', name: null, engine: 'whatsapp' };
    // Messages the platform delivered 25 hours late: the 24-hour window of the last one is closed.
    const late = { channel: waba, occurredAt: new Date(T0 - 25 * 3_600_000).toISOString() };
    const stale = addToBurst(
      startBurst(message('pesanan saya', 0, late)),
      message('belum sampai', 500, late),
    );
    const plan = evaluateBurstRule(rules, rule, stale, noFacts, new Date(T0 + 2_500));
    expect(plan.matched).toHaveLength(1);
    expect(plan.blockedReplies).toEqual([{ rule: 'answer-once', actionId: 'answer-once#0' }]);
    expect(plan.actions).toMatchObject([
      { id: 'answer-once#0~closed.0', type: 'note', text: 'closed for answer-once' },
    ]);
    const fresh = addToBurst(
      startBurst(message('pesanan saya', 0, { channel: waba })),
      message('belum sampai', 500, { channel: waba }),
    );
    expect(evaluateBurstRule(rules, rule, fresh, noFacts, new Date(T0 + 2_500)).actions).toMatchObject([
      {
        type: 'reply',
        window: { applies: true, channelKind: 'whatsapp_api', closesAt: '2026-11-24T03:15:00.500Z' },
      },
    ]);
  });

  it('keeps each message to 1,000 characters and the burst to 4,000 bytes; later texts count but are dropped', () => {
    let big = startBurst(message('a'.repeat(1_500), 0));
    expect(big.texts[0]).toHaveLength(BURST_TEXT_LIMITS.messageChars);
    for (let i = 1; i < 6; i++) big = addToBurst(big, message('b'.repeat(999), i * 100));
    expect(big.count).toBe(6);
    expect(big.texts).toHaveLength(4);
    expect(big.droppedTexts).toBe(2);
    const plan = evaluateBurstRule(rules, rule, big, noFacts, new Date(T0 + 3_000));
    expect(plan.outcomes[0]?.reason).toMatch(
      /^burst of 6 message\(s\); the text of the last 2 was not kept: /,
    );
  });
});

describe('grouping messages into bursts', () => {
  const settings = { debounceMs: 2_000, maxWaitMs: 10_000, unless: [] };

  it('a gap of at least the debounce begins a new burst; the last one ends when quiet', () => {
    const grouped = groupBursts(
      [message('a', 0), message('b', 1_900), message('c', 3_899), message('d', 5_898), message('e', 7_898)],
      settings,
    );
    expect(grouped.map((g) => [g.burst.count, new Date(g.dueAt).toISOString(), g.end])).toEqual([
      [4, '2026-11-23T03:15:07.898Z', 'quiet for 2s'],
      [1, '2026-11-23T03:15:09.898Z', 'quiet for 2s'],
    ]);
  });

  it('max_wait ends a burst that never goes quiet', () => {
    const steady = Array.from({ length: 12 }, (_, i) => message(`m${i}`, i * 1_000));
    const grouped = groupBursts(steady, settings);
    expect(grouped.map((g) => [g.burst.count, g.end])).toEqual([
      [10, 'max_wait 10s after it began'],
      [2, 'quiet for 2s'],
    ]);
    expect(new Date(grouped[0]?.dueAt ?? 0).toISOString()).toBe('2026-11-23T03:15:10.000Z');
  });

  it('planBursts evaluates each burst when it ends, and a once-mark set by one holds for the next', () => {
    const rules = rulesFrom(`  - name: hello
    on: message_in
    debounce: 2s
    then: [ { reply: { text: "Halo! ({{burst.count}})", once_per_conversation: 1h } } ]
`);
    const runs = planBursts(rules, [message('a', 0), message('b', 500), message('c', 5_000)], noFacts);
    expect(runs.map((r) => [r.burst.count, r.dueAt, r.plan.matched.length, r.plan.actions.length])).toEqual([
      [2, '2026-11-23T03:15:02.500Z', 1, 1],
      [1, '2026-11-23T03:15:07.000Z', 0, 0],
    ]);
    expect(runs[1]?.plan.outcomes[0]?.reason).toMatch(/suppressed: once_per_conversation 1h/);
  });
});
