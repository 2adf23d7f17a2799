import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../../src/config/load-config.js';
import type { CompiledRules } from '../../../../src/rules/compile-rules.js';
import { evaluateRules } from '../../../../src/rules/evaluate-rules.js';
import type { ConversationFacts } from '../../../../src/rules/plan.js';
import { comparePlans, describeAction } from '../../../../src/worker/shadow/compare-plans.js';
import { makeEvent } from '../../../support/make-event.js';

// Issue 28: the active plan against the candidate's, rule by rule, as `shadow report` shows it.

const HEAD = `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
timezone: Asia/Jakarta
business_hours: { weekly: { mon-fri: "08:00-17:00" } }
destinations: { crm: { url: "https://crm.example.com/hooks" } }
`;

const ACTIVE = `rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund, kecewa, marah ] } }
    then:
      - note: "Escalated: customer wrote '{{match.keyword}}'"
      - need_human: true
      - forward: crm
      - after: 15m
        unless: agent_reply
        then: [ { note: "No agent reply." } ]
    stop: true
  - name: catalog
    on: message_in
    if: { text: { any_keywords: [ katalog ] } }
    then: [ { reply: { text: "Halo {{customer.name}}, ini katalognya" } } ]
`;

function compile(rules: string): CompiledRules {
  return parseConfigText(`${HEAD}${rules}`, { fileName: 'c.yaml', env: {} }).rules;
}

const facts: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};
const now = new Date('2026-11-23T03:00:00.000Z'); // a Monday, 10:00 in Jakarta

function compare(active: string, candidate: string, text: string) {
  const event = makeEvent({ text, occurredAt: now.toISOString(), senderName: 'Budi' });
  return comparePlans(
    evaluateRules(compile(active), event, facts, now),
    evaluateRules(compile(candidate), event, facts, now),
  );
}

describe('comparePlans (shadow rules, issue 28)', () => {
  it('finds nothing when the rules are the same, whatever matched', () => {
    for (const text of ['halo', 'mau refund', 'minta katalog', 'refund katalog']) {
      const result = compare(ACTIVE, ACTIVE, text);
      expect(result.differences).toEqual([]);
    }
    expect(compare(ACTIVE, ACTIVE, 'mau refund').activeMatched).toEqual(['escalate']);
    expect(compare(ACTIVE, ACTIVE, 'mau refund').candidateMatched).toEqual(['escalate']);
  });

  it('a stricter keyword list: the rule differs where only the active rules match, with both sides rendered', () => {
    const stricter = ACTIVE.replace('[ refund, kecewa, marah ]', '[ marah ]');
    expect(compare(ACTIVE, stricter, 'saya marah').differences).toEqual([]);
    expect(compare(ACTIVE, stricter, 'halo').differences).toEqual([]);
    const result = compare(ACTIVE, stricter, 'mau refund');
    expect(result.differences).toEqual([
      {
        rule: 'escalate',
        active: {
          matched: true,
          actions: [
            `note "Escalated: customer wrote 'refund'"`,
            'need_human',
            'forward crm',
            'after 15m unless agent_reply: [note "No agent reply."]',
          ],
        },
        candidate: { matched: false, actions: [] },
      },
    ]);
  });

  it('a rule that no longer stops lets a later rule match: both rules differ', () => {
    const stricter = ACTIVE.replace('[ refund, kecewa, marah ]', '[ marah ]');
    const result = compare(ACTIVE, stricter, 'refund katalog');
    expect(result.differences.map((d) => d.rule)).toEqual(['escalate', 'catalog']);
    expect(result.differences[1]).toEqual({
      rule: 'catalog',
      active: { matched: false, actions: [] },
      candidate: { matched: true, actions: ['reply "Halo Budi, ini katalognya"'] },
    });
  });

  it('a changed text differs as rendered; an added action differs; a renamed rule is two differences', () => {
    const retexted = ACTIVE.replace('ini katalognya', 'ini katalog terbaru');
    const text = compare(ACTIVE, retexted, 'katalog');
    expect(text.differences).toEqual([
      {
        rule: 'catalog',
        active: { matched: true, actions: ['reply "Halo Budi, ini katalognya"'] },
        candidate: { matched: true, actions: ['reply "Halo Budi, ini katalog terbaru"'] },
      },
    ]);
    const more = ACTIVE.replace(
      'then: [ { reply: { text: "Halo {{customer.name}}, ini katalognya" } } ]',
      'then: [ { reply: { text: "Halo {{customer.name}}, ini katalognya" } }, { forward: crm } ]',
    );
    expect(compare(ACTIVE, more, 'katalog').differences[0]?.candidate.actions).toEqual([
      'reply "Halo Budi, ini katalognya"',
      'forward crm',
    ]);
    const renamed = ACTIVE.replace('name: catalog', 'name: catalogue');
    expect(compare(ACTIVE, renamed, 'katalog').differences.map((d) => [d.rule, d.active.matched])).toEqual([
      ['catalog', true],
      ['catalogue', false],
    ]);
  });

  it('the same actions in another order differ; a timer of other length differs', () => {
    const reordered = ACTIVE.replace(
      '      - need_human: true\n      - forward: crm\n',
      '      - forward: crm\n      - need_human: true\n',
    );
    expect(compare(ACTIVE, reordered, 'refund').differences.map((d) => d.rule)).toEqual(['escalate']);
    const longer = ACTIVE.replace('after: 15m', 'after: 30m');
    expect(compare(ACTIVE, longer, 'refund').differences[0]?.candidate.actions[3]).toBe(
      'after 30m unless agent_reply: [note "No agent reply."]',
    );
  });

  it('describes media replies, replies to the message and business-time timers', () => {
    expect(
      describeAction({
        id: 'r#0',
        rule: 'r',
        type: 'reply',
        message: { media: { url: 'https://cdn.example.com/k.pdf', type: 'document', caption: 'Katalog' } },
        replyToMessageId: 'm-1',
        once: null,
        window: { applies: false, channelKind: null, hours: 24, closesAt: null },
        whenClosed: [],
      }),
    ).toBe('reply document https://cdn.example.com/k.pdf caption "Katalog" (in reply to the message)');
    expect(
      describeAction({
        id: 'r#1',
        rule: 'r',
        type: 'timer',
        delayMs: 5_000_000,
        unless: [],
        actions: [{ id: 'r#1.0', rule: 'r', type: 'need_human' }],
        clock: 'business',
        businessMs: 1_800_000,
      }),
    ).toBe('after 30m of business hours: [need_human]');
  });
});
