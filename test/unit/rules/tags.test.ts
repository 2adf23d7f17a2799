import { describe, expect, it } from 'vitest';
import { type ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import type { CompiledRules } from '../../../src/rules/compile-rules.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { formatPlan } from '../../../src/rules/format-plan.js';
import type { ConversationFacts, PlannedAction } from '../../../src/rules/plan.js';
import { sortedNames, tagsAfter } from '../../../src/rules/tags.js';
import { makeEvent } from '../../support/make-event.js';

/** Tags, the conversation's memory (issue 28, point 2): the language and the evaluator. */

const HEADER = `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
channels:
  - { match: { engine: whatsapp, channel_id: ch_waba_1 }, kind: whatsapp_api }
reply_window:
  applies_to: [ whatsapp_api ]
  when_closed:
    - tag: window-missed
    - note: "closed, tags now: {{tags}}"
destinations:
  crm: { url: "https://crm.example.com/hooks" }
rules:
`;

function parse(rulesYaml: string): CompiledRules {
  return parseConfigText(`${HEADER}${rulesYaml}`, { fileName: 'tags.yaml', env: {} }).rules;
}

function problems(rulesYaml: string): string[] {
  try {
    parse(rulesYaml);
  } catch (error) {
    return (error as ConfigError).issues.map(formatConfigIssue);
  }
  throw new Error('expected a ConfigError');
}

const T0 = new Date('2026-11-23T03:00:00Z');
const HOUR = 3_600_000;

function facts(tags?: Record<string, number | null>): ConversationFacts {
  return {
    lastCustomerMessageAt: T0,
    isFirstCustomerMessage: false,
    onceMarks: {},
    ...(tags ? { tags } : {}),
  };
}

function event(text: string, overrides: Partial<ConversationEvent> = {}): ConversationEvent {
  return makeEvent({ text, occurredAt: T0.toISOString(), receivedAt: T0.toISOString(), ...overrides });
}

const ids = (actions: readonly PlannedAction[]) => actions.map((a) => `${a.id} ${a.type}`);

describe('tag, untag and tags: in the config', () => {
  it.each([
    [
      'a name with other characters',
      '[ { tag: "vip!" } ]',
      'rules.0.then.0.tag: expected a tag name: 1 to 64 letters, digits, -, _, . or :, starting with a letter or digit (e.g. vip, order:late); case does not matter, got "vip!"',
    ],
    [
      'a name of 65 characters',
      `[ { tag: ${'a'.repeat(65)} } ]`,
      `rules.0.then.0.tag: expected a tag name: 1 to 64 letters, digits, -, _, . or :, starting with a letter or digit (e.g. vip, order:late); case does not matter, got "${'a'.repeat(57)}..."`,
    ],
    [
      'a name starting with -',
      '[ { untag: [ ok, "-x" ] } ]',
      'rules.0.then.0.untag.1: expected a tag name: 1 to 64 letters, digits, -, _, . or :, starting with a letter or digit (e.g. vip, order:late); case does not matter, got "-x"',
    ],
    ['an empty list', '[ { tag: [] } ]', 'rules.0.then.0.tag: must list at least one tag'],
    [
      'for: without tag:',
      '[ { untag: vip, for: 1h } ]',
      'rules.0.then.0.for: for: belongs to tag: (how long the tags last): write { tag: vip, for: 24h }',
    ],
    [
      'for: 0s',
      '[ { tag: vip, for: 0s } ]',
      'rules.0.then.0.for: a tag for 0 is never seen: give a duration above 0 (e.g. for: 24h), or leave for: out',
    ],
    [
      'for: longer than a year',
      '[ { tag: vip, for: 400d } ]',
      "rules.0.then.0.for: a tag lasts at most 365d (a conversation's state is kept 30 days after its last customer message anyway): use a shorter for:, or leave it out (until untag)",
    ],
    [
      'a bad for:',
      '[ { tag: vip, for: tomorrow } ]',
      'rules.0.then.0.for: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "tomorrow"',
    ],
    [
      'tag and untag in one action',
      '[ { tag: a, untag: b } ]',
      'rules.0.then.0: an action does one thing; this one has tag and untag: split it into separate list items',
    ],
  ])('%s is a load error that says how to fix it', (_name, then, message) => {
    const found = problems(`  - { name: r, on: message_in, then: ${then} }\n`);
    expect(found.map((line) => line.replace(/^tags\.yaml:\d+:\d+: /, ''))).toEqual([message]);
  });

  it.each([
    ['no mode', '{}', 'rules.0.if.tags: tags needs any, all or none: a list of tag names'],
    ['an empty list', '{ any: [] }', 'rules.0.if.tags.any: must list at least one tag'],
    [
      'an unknown mode',
      '{ some: [vip] }',
      'rules.0.if.tags.some: unknown key "some"; allowed here: any, all, none',
    ],
    [
      'a bad name',
      '{ all: [ "v i p" ] }',
      'rules.0.if.tags.all.0: expected a tag name: 1 to 64 letters, digits, -, _, . or :, starting with a letter or digit (e.g. vip, order:late); case does not matter, got "v i p"',
    ],
  ])('a tags: condition with %s is a load error', (_name, condition, message) => {
    const found = problems(
      `  - { name: r, on: message_in, if: { tags: ${condition} }, then: [ { tag: vip } ] }\n`,
    );
    expect(found.map((line) => line.replace(/^tags\.yaml:\d+:\d+: /, ''))).toContain(message);
  });

  it('reads names in lower case, a single name as a list, without repeats', () => {
    const rules = parse(`  - name: r
    on: message_in
    if: { tags: { none: [ VIP ] } }
    then: [ { tag: [ VIP, Gold, vip ], for: 24h }, { untag: Order:Late } ]
`);
    const plan = evaluateRules(rules, event('halo'), facts(), T0);
    expect(plan.actions).toEqual([
      {
        id: 'r#0',
        rule: 'r',
        type: 'tag',
        tags: ['vip', 'gold'],
        forMs: 24 * HOUR,
        expiresAt: new Date(T0.getTime() + 24 * HOUR).toISOString(),
      },
      { id: 'r#1', rule: 'r', type: 'untag', tags: ['order:late'] },
    ]);
  });

  it('{{tags}} is a template variable; {{tags.x}} is a load error that says so', () => {
    expect(problems('  - { name: r, on: message_in, then: [ { note: "{{tags.x}}" } ] }\n')).toEqual([
      'tags.yaml:13:48: rules.0.then.0.note: unknown template variable {{tags.x}}: {{tags}} has no fields: write {{tags}}',
    ]);
  });
});

describe('the tags: condition', () => {
  const rules = parse(`  - name: any-vip
    on: message_in
    if: { tags: { any: [ vip, gold ] } }
    then: [ { note: "any" } ]
  - name: all-vip-gold
    on: message_in
    if: { tags: { all: [ vip, gold ] } }
    then: [ { note: "all" } ]
  - name: none-spam
    on: message_in
    if: { tags: { none: [ spam ] } }
    then: [ { note: "none" } ]
  - name: nested
    on: message_in
    if:
      any:
        - { text: { any_keywords: [ refund ] } }
        - all: [ { tags: { any: [ vip ] } }, { not: { tags: { any: [ muted ] } } } ]
    then: [ { note: "nested" } ]
  - name: setter
    on: message_in
    if: { text: { any_keywords: [ set ] } }
    then: [ { tag: [ vip, gold, spam, muted ] } ]
`);
  const matched = (tags: Record<string, number | null>, text = 'halo') =>
    evaluateRules(rules, event(text), facts(tags), T0).matched.map((m) => m.rule);

  it.each([
    [{}, ['none-spam']],
    [{ vip: null }, ['any-vip', 'none-spam', 'nested']],
    [{ gold: null, vip: null }, ['any-vip', 'all-vip-gold', 'none-spam', 'nested']],
    [{ vip: null, muted: null }, ['any-vip', 'none-spam']],
    [{ spam: null, gold: null }, ['any-vip']],
  ])('with tags %j: %j match', (tags, expected) => {
    expect(matched(tags)).toEqual(expected);
  });

  it('says why, with the conversation tags, in the outcomes explain prints', () => {
    const plan = evaluateRules(rules, event('halo'), facts({ gold: null }), T0);
    const reason = (rule: string) => plan.outcomes.find((o) => o.rule === rule)?.reason;
    expect(reason('any-vip')).toBe("tagged 'gold'");
    expect(reason('all-vip-gold')).toBe('lacks the tags [vip] of all: (its tags: gold)');
    expect(reason('none-spam')).toBe('has none of the tags [spam]');
    const empty = evaluateRules(rules, event('halo'), facts(), T0);
    expect(empty.outcomes.find((o) => o.rule === 'any-vip')?.reason).toBe(
      'has none of the tags [vip, gold] (the conversation has no tags)',
    );
    const spam = evaluateRules(rules, event('halo'), facts({ spam: null }), T0);
    expect(spam.outcomes.find((o) => o.rule === 'none-spam')?.reason).toBe(
      "tagged 'spam', which tags: none: excludes",
    );
  });

  it('sits beside a keyword test without disturbing the keyword index', () => {
    const gated = parse(`  - name: vip-refund
    on: message_in
    if: { text: { any_keywords: [ refund ] }, tags: { any: [ vip ] } }
    then: [ { need_human: true } ]
  - name: vip-set
    on: message_in
    then: [ { tag: vip } ]
`);
    expect(
      evaluateRules(gated, event('mau refund'), facts({ vip: null }), T0).matched.map((m) => m.rule),
    ).toEqual(['vip-refund', 'vip-set']);
    expect(evaluateRules(gated, event('halo'), facts({ vip: null }), T0).matched.map((m) => m.rule)).toEqual([
      'vip-set',
    ]);
    expect(evaluateRules(gated, event('mau refund'), facts(), T0).matched.map((m) => m.rule)).toEqual([
      'vip-set',
    ]);
  });
});

describe('tags within one event: a later rule sees what an earlier rule planned', () => {
  const rules = parse(`  - name: before-tagging
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { note: "seen before tagging: {{tags}}" } ]
  - name: tag-vip
    on: message_in
    if: { text: { any_keywords: [ vip ] } }
    then:
      - note: "before: [{{tags}}]"
      - tag: [ vip, followed ]
      - note: "after: [{{tags}}]"
      - forward: crm
  - name: after-tagging
    on: message_in
    if: { tags: { all: [ vip ] } }
    then: [ { note: "escalated: {{tags}}" }, { untag: followed }, { forward: crm } ]
  - name: last
    on: message_in
    if: { tags: { none: [ followed ] } }
    then: [ { note: "last: [{{tags}}]" } ]
`);

  it('earlier rules and earlier actions of the same rule, in plan order; never an earlier rule', () => {
    const plan = evaluateRules(rules, event('saya vip'), facts({ alpha: null }), T0);
    expect(plan.matched.map((m) => m.rule)).toEqual(['tag-vip', 'after-tagging', 'last']);
    expect(plan.actions.map((a) => (a.type === 'note' ? a.text : `${a.type}`))).toEqual([
      'before: [alpha]',
      'tag',
      'after: [alpha, followed, vip]',
      'forward',
      'escalated: alpha, followed, vip',
      'untag',
      'forward',
      'last: [alpha, vip]',
    ]);
    // Forwards carry the tags as planned at their place in the plan.
    const forwards = plan.actions.filter((a) => a.type === 'forward');
    expect(forwards.map((f) => (f.type === 'forward' ? f.tags : undefined))).toEqual([
      ['alpha', 'followed', 'vip'],
      ['alpha', 'vip'],
    ]);
    expect(sortedNames(tagsAfter({ alpha: null }, plan.actions, T0))).toEqual(['alpha', 'vip']);
  });

  it('a rule suppressed by its cooldown plans no tag, and later rules do not see one', () => {
    const cooled = parse(`  - name: tag-once
    on: message_in
    cooldown: 1h
    then: [ { tag: vip } ]
  - name: sees
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { note: "vip" } ]
`);
    const first = evaluateRules(cooled, event('a'), facts(), T0);
    expect(first.matched.map((m) => m.rule)).toEqual(['tag-once', 'sees']);
    const inCooldown = evaluateRules(
      cooled,
      event('b'),
      { ...facts(), cooldowns: { 'tag-once': new Date(T0.getTime() - 60_000).toISOString() } },
      T0,
    );
    expect(inCooldown.matched.map((m) => m.rule)).toEqual([]);
  });
});

describe('tag expiry (for:) with a fake clock', () => {
  const rules = parse(`  - name: vip-for-a-day
    on: message_in
    if: { text: { any_keywords: [ vip ] } }
    then: [ { tag: vip, for: 24h } ]
  - name: fast-lane
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { need_human: true } ]
`);

  it('a tag set for 24h holds until the last millisecond before it expires, not at the instant', () => {
    const plan = evaluateRules(rules, event('saya vip'), facts(), T0);
    const after = tagsAfter({}, plan.actions, T0);
    const until = after.get('vip');
    expect(until).toBe(T0.getTime() + 24 * HOUR);
    const stored = Object.fromEntries(after);
    const at = (ms: number) =>
      evaluateRules(rules, event('halo'), facts(stored), new Date(ms)).matched.map((m) => m.rule);
    expect(at(T0.getTime() + 24 * HOUR - 1)).toEqual(['fast-lane']);
    expect(at(T0.getTime() + 24 * HOUR)).toEqual([]);
    expect(at(T0.getTime() + 48 * HOUR)).toEqual([]);
  });

  it('tagging again moves the expiry on; a tag without for: never expires', () => {
    const twice = evaluateRules(rules, event('vip'), facts({ vip: T0.getTime() + HOUR }), T0);
    expect(tagsAfter({ vip: T0.getTime() + HOUR }, twice.actions, T0).get('vip')).toBe(
      T0.getTime() + 24 * HOUR,
    );
    const forever = evaluateRules(
      rules,
      event('halo'),
      facts({ vip: null }),
      new Date('2030-01-01T00:00:00Z'),
    );
    expect(forever.matched.map((m) => m.rule)).toEqual(['fast-lane']);
  });

  it('{{tags}} leaves expired tags out', () => {
    const show = parse(`  - { name: show, on: message_in, then: [ { note: "[{{tags}}]" } ] }\n`);
    const plan = evaluateRules(
      show,
      event('x'),
      facts({ old: T0.getTime(), zeta: null, beta: T0.getTime() + 1 }),
      T0,
    );
    expect(plan.actions[0]?.type === 'note' && plan.actions[0].text).toBe('[beta, zeta]');
  });
});

describe('tags in timers, when_closed and forwards', () => {
  it("a timer's tag counts its for: from when it fires; its forward carries the tags of then", () => {
    const rules = parse(`  - name: sla
    on: message_in
    then:
      - forward: crm
      - after: 15m
        then: [ { tag: unanswered, for: 2h }, { forward: crm } ]
`);
    const plan = evaluateRules(rules, event('halo'), facts({ vip: null }), T0);
    const timer = plan.actions[1];
    expect(timer?.type === 'timer' && timer.actions).toEqual([
      { id: 'sla#1.0', rule: 'sla', type: 'tag', tags: ['unanswered'], forMs: 2 * HOUR },
      { id: 'sla#1.1', rule: 'sla', type: 'forward', destination: 'crm' },
    ]);
    expect(plan.actions[0]).toEqual({
      id: 'sla#0',
      rule: 'sla',
      type: 'forward',
      destination: 'crm',
      tags: ['vip'],
    });
    // A timer's tags are not the event's.
    expect(sortedNames(tagsAfter({ vip: null }, plan.actions, T0))).toEqual(['vip']);
  });

  it('rules without tags plan forwards as before (nothing about tags per event)', () => {
    const rules = parse('  - { name: crm, on: message_in, then: [ { forward: crm } ] }\n');
    const noTags = parseConfigText(
      `${HEADER.replace(/ {4}- tag: window-missed\n/, '').replace('closed, tags now: {{tags}}', 'closed')}  - { name: crm, on: message_in, then: [ { forward: crm } ] }\n`,
      { fileName: 'plain.yaml', env: {} },
    ).rules;
    expect(rules.usesTags).toBe(true); // when_closed tags
    expect(noTags.usesTags).toBe(false);
    expect(evaluateRules(noTags, event('halo'), facts({ vip: null }), T0).actions).toEqual([
      { id: 'crm#0', rule: 'crm', type: 'forward', destination: 'crm' },
    ]);
  });

  it('a reply the closed window replaces: the when_closed tag is planned and seen by later rules', () => {
    const rules = parse(`  - name: answer
    on: ai_reply
    then: [ { reply: { text: "hi" } } ]
  - name: missed
    on: ai_reply
    if: { tags: { any: [ window-missed ] } }
    then: [ { need_human: true } ]
`);
    const waba = { id: 'ch_waba_1', name: 'WA', engine: 'whatsapp' };
    const closed = { ...facts(), lastCustomerMessageAt: new Date(T0.getTime() - 30 * HOUR) };
    const plan = evaluateRules(rules, event('halo', { kind: 'ai_reply', channel: waba }), closed, T0);
    expect(ids(plan.actions)).toEqual([
      'answer#0~closed.0 tag',
      'answer#0~closed.1 note',
      'missed#0 need_human',
    ]);
    const note = plan.actions[1];
    expect(note?.type === 'note' && note.text).toBe('closed, tags now: window-missed');
    // Planned for the event but not by a rule's own action: its for: would count from the run.
    expect(plan.actions[0]).toEqual({
      id: 'answer#0~closed.0',
      rule: 'answer',
      type: 'tag',
      tags: ['window-missed'],
      forMs: null,
    });
  });

  it('explain prints the tags before and after, and each tag action', () => {
    const rules = parse(`  - name: vip
    on: message_in
    then: [ { tag: vip, for: 24h }, { untag: new } ]
`);
    const e = event('halo');
    const plan = evaluateRules(rules, e, facts({ new: null }), T0);
    const text = formatPlan(plan, e, T0, 'Mon 10:00 Asia/Jakarta', {
      before: ['new'],
      after: sortedNames(tagsAfter({ new: null }, plan.actions, T0)),
    });
    expect(text).toContain('\ntags: new\n');
    expect(text).toContain(
      '  1. [vip#0] tag the conversation: vip for 24h (until 2026-11-24T03:00:00.000Z)\n  2. [vip#1] untag the conversation: new\n',
    );
    expect(text).toContain('\ntags after the event: vip\n');
  });
});
