import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import type { CompiledRules } from '../../../src/rules/compile-rules.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { formatPlan } from '../../../src/rules/format-plan.js';
import type { ConversationFacts, PlannedAction } from '../../../src/rules/plan.js';
import { makeEvent } from '../../support/make-event.js';

/** Issue 16: on: window_closing, timers in business time, rules that could answer themselves. */
const HEADER = `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
business_hours:
  weekly: { mon-fri: "08:00-17:00", sat: "09:00-13:00" }
  holidays: [ "2026-12-25" ]
channels:
  - { match: { engine: whatsapp, channel_id: ch_waba_1 }, kind: whatsapp_api }
reply_window:
  applies_to: [ whatsapp_api ]
  hours: 24
`;

function rulesFrom(rulesYaml: string): CompiledRules {
  return parseConfigText(`${HEADER}rules:\n${rulesYaml}`, { fileName: 'test.yaml', env: {} }).rules;
}

function problemsOf(rulesYaml: string): string[] {
  try {
    rulesFrom(rulesYaml);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  return [];
}

const noFacts: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};
const FRI_1650 = new Date('2026-11-27T09:50:00Z'); // Friday 16:50 WIB

function message(at: Date, channel: ConversationEvent['channel']): ConversationEvent {
  return makeEvent({ occurredAt: at.toISOString(), receivedAt: at.toISOString(), messageId: 'm-1', channel });
}
const WABA = { id: 'ch_waba_1', name: 'WA API', engine: 'whatsapp', rawEngine: 'waba' };
const QR = { id: 'ch_wa_qr', name: 'WA QR', engine: 'whatsapp', rawEngine: 'wa' };

const WARN = `  - name: warn-window
    on: window_closing
    before: 2h
    then:
      - need_human: true
      - note: "Window closes in 2 h for {{customer.name}}: answer now for free"
`;

function timers(actions: readonly PlannedAction[]) {
  return actions.filter((a): a is Extract<PlannedAction, { type: 'timer' }> => a.type === 'timer');
}

describe('on: window_closing', () => {
  it('a customer message on a windowed channel arms a timer due `before` ahead of the window end', () => {
    const plan = evaluateRules(rulesFrom(WARN), message(FRI_1650, WABA), noFacts, FRI_1650);
    const [timer] = timers(plan.actions);
    expect(timer).toMatchObject({
      id: 'warn-window#window_closing',
      trigger: 'window_closing',
      unless: ['message_in', 'agent_reply'],
      dueAt: '2026-11-28T07:50:00.000Z',
      dueLocal: 'Sat 2026-11-28 14:50 Asia/Jakarta',
      delayMs: 22 * 3_600_000,
    });
    expect(timer?.actions.map((a) => (a.type === 'note' ? a.text : a.type))).toEqual([
      'need_human',
      'Window closes in 2 h for Budi: answer now for free',
    ]);
    expect(plan.matched.map((m) => m.rule)).toEqual(['warn-window']);
    expect(plan.outcomes[0]?.reason).toContain('armed: fires Sat 2026-11-28 14:50 Asia/Jakarta');
    const text = formatPlan(plan, message(FRI_1650, WABA), FRI_1650, 'Fri 16:50 Asia/Jakarta');
    expect(text).toContain('window_closing timer: after 22h (due Sat 2026-11-28 14:50 Asia/Jakarta)');
  });

  it('counts from the latest customer message, and not at all on a channel without a window', () => {
    const rules = rulesFrom(WARN);
    const late = new Date(FRI_1650.getTime() + 3_600_000);
    const facts = { ...noFacts, lastCustomerMessageAt: late };
    const plan = evaluateRules(rules, message(FRI_1650, WABA), facts, late);
    expect(timers(plan.actions)[0]?.dueAt).toBe('2026-11-28T08:50:00.000Z');
    const qr = evaluateRules(rules, message(FRI_1650, QR), noFacts, FRI_1650);
    expect(qr.actions).toEqual([]);
    expect(qr.outcomes[0]?.reason).toMatch(/^no reply window on this channel \(kind whatsapp_qr/);
  });

  it('a message read when less than `before` is left fires at once; one read after the window closed arms nothing', () => {
    const rules = rulesFrom(WARN);
    const lateRead = new Date(FRI_1650.getTime() + 23 * 3_600_000);
    expect(timers(evaluateRules(rules, message(FRI_1650, WABA), noFacts, lateRead).actions)[0]?.delayMs).toBe(
      0,
    );
    const closed = new Date(FRI_1650.getTime() + 25 * 3_600_000);
    const plan = evaluateRules(rules, message(FRI_1650, WABA), noFacts, closed);
    expect(plan.actions).toEqual([]);
    expect(plan.outcomes[0]?.reason).toBe('the reply window is already closed: nothing to warn about');
  });

  it('is armed even after an event rule with stop: true, and only by customer messages', () => {
    const rules = rulesFrom(`  - name: stopper
    on: message_in
    then: [ { need_human: true } ]
    stop: true
${WARN}`);
    const plan = evaluateRules(rules, message(FRI_1650, WABA), noFacts, FRI_1650);
    expect(plan.matched.map((m) => m.rule)).toEqual(['stopper', 'warn-window']);
    const agent = makeEvent({ kind: 'agent_reply', name: 'agent.message_out', channel: WABA });
    expect(evaluateRules(rules, agent, noFacts, FRI_1650).actions).toEqual([]);
  });

  it.each([
    [
      `  - name: w\n    on: window_closing\n    then: [ { need_human: true } ]\n`,
      'on: window_closing needs before: DURATION',
    ],
    [
      `  - name: w\n    on: [ window_closing, message_in ]\n    before: 1h\n    then: [ { need_human: true } ]\n`,
      'give it a rule of its own',
    ],
    [
      `  - name: w\n    on: message_in\n    before: 1h\n    then: [ { need_human: true } ]\n`,
      'before: belongs to on: window_closing',
    ],
    [
      `  - name: w\n    on: window_closing\n    before: 24h\n    then: [ { need_human: true } ]\n`,
      'is not shorter than the 24-hour reply window',
    ],
    [
      `  - name: w\n    on: window_closing\n    before: 1h\n    then: [ { after: 5m, then: [ { need_human: true } ] } ]\n`,
      'a window_closing rule is already a timer',
    ],
    // Issue 30: `before: 0` (a bare number) was refused and `before: 0s` passed; both are refused.
    [
      `  - name: w\n    on: window_closing\n    before: 0s\n    then: [ { need_human: true } ]\n`,
      'rules.0.before: 0 fires when the reply window has already closed: give a duration above 0',
    ],
    [
      `  - name: w\n    on: window_closing\n    before: 0ms\n    then: [ { need_human: true } ]\n`,
      'rules.0.before: 0 fires when the reply window has already closed',
    ],
    [
      `  - name: w\n    on: window_closing\n    before: 0\n    then: [ { need_human: true } ]\n`,
      'rules.0.before: expected a duration such as 500ms',
    ],
  ])('validate refuses %#', (yaml, message) => {
    expect(problemsOf(yaml).join('\n')).toContain(message);
  });
});

describe('after: with clock: business', () => {
  const SLA = `  - name: sla
    on: message_in
    then:
      - after: 30m
        clock: business
        unless: agent_reply
        then: [ { note: "No agent reply within 30 business minutes" } ]
`;

  it('a Friday-evening timer is due Saturday morning, shown in local time', () => {
    const plan = evaluateRules(rulesFrom(SLA), message(FRI_1650, QR), noFacts, FRI_1650);
    const [timer] = timers(plan.actions);
    expect(timer).toMatchObject({
      clock: 'business',
      dueAt: '2026-11-28T02:20:00.000Z',
      dueLocal: 'Sat 2026-11-28 09:20 Asia/Jakarta',
      delayMs: Date.parse('2026-11-28T02:20:00Z') - FRI_1650.getTime(),
    });
    const text = formatPlan(plan, message(FRI_1650, QR), FRI_1650, 'Fri 16:50 Asia/Jakarta');
    expect(text).toContain(
      'timer: after 30m of business hours (due Sat 2026-11-28 09:20 Asia/Jakarta, in 16h 30m)',
    );
  });

  it('a wall-clock timer keeps its delay and has no due time fixed by the plan', () => {
    const plan = evaluateRules(
      rulesFrom(SLA.replace('        clock: business\n', '')),
      message(FRI_1650, QR),
      noFacts,
      FRI_1650,
    );
    expect(timers(plan.actions)[0]).toMatchObject({ delayMs: 1_800_000 });
    expect(timers(plan.actions)[0]?.dueAt).toBeUndefined();
  });

  it('needs business_hours', () => {
    const text = `${HEADER.replace(/business_hours:\n(?: {2}.*\n)+/, '')}rules:\n${SLA}`;
    expect(() => parseConfigText(text, { fileName: 't.yaml', env: {} })).toThrow(
      /clock: business counts open business hours, but the config has no business_hours/,
    );
  });
});

describe('rules that could answer their own replies', () => {
  it.each(['agent_reply', 'message_sent'])('a rule on %s that replies is refused', (kind) => {
    const problems = problemsOf(`  - name: echo
    on: ${kind}
    then: [ { reply: { text: "Thanks!" } } ]
`);
    expect(problems.join('\n')).toContain(`rule "echo" is on ${kind} and replies`);
  });

  it('a rule on agent_reply that only notes is fine', () => {
    expect(
      problemsOf(`  - name: log-agent\n    on: agent_reply\n    then: [ { note: "agent answered" } ]\n`),
    ).toEqual([]);
  });
});
