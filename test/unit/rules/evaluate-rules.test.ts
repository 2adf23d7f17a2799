import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import type { CompiledRules } from '../../../src/rules/compile-rules.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import type { ConversationFacts, PlannedAction } from '../../../src/rules/plan.js';
import { channelKind, replyWindow, resolveChannelKind } from '../../../src/rules/reply-window.js';
import { DEFAULT_WINDOW_KINDS } from '../../../src/rules/rules-settings-schema.js';
import { cpuMs } from '../../support/cpu-time.js';
import { makeEvent } from '../../support/make-event.js';

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
  - { match: { engine: instagram }, kind: instagram }
reply_window:
  applies_to: [ whatsapp_api, instagram ]
  when_closed:
    - note: "Window closed ({{window.closed_for}}) for {{rule.name}}"
    - need_human: true
destinations:
  crm: { url: "https://crm.example.com/hooks" }
`;

function rulesFrom(rulesYaml: string): CompiledRules {
  return parseConfigText(`${HEADER}rules:\n${rulesYaml}`, { fileName: 'test.yaml', env: {} }).rules;
}

const MON_10 = new Date('2026-11-23T03:00:00Z'); // Mon 10:00 WIB: open
const SUN_10 = new Date('2026-11-29T03:00:00Z'); // Sun 10:00 WIB: closed

const noFacts: ConversationFacts = {
  lastCustomerMessageAt: null,
  isFirstCustomerMessage: false,
  onceMarks: {},
};

function event(overrides: Partial<ConversationEvent> = {}, at: Date = MON_10): ConversationEvent {
  return makeEvent({
    occurredAt: at.toISOString(),
    receivedAt: at.toISOString(),
    messageId: 'm-1',
    ...overrides,
  });
}

function summary(actions: readonly PlannedAction[]): string[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'note':
        return `${a.id} note ${a.text}`;
      case 'reply':
        return `${a.id} reply ${'text' in a.message ? a.message.text : a.message.media.url}`;
      case 'forward':
        return `${a.id} forward ${a.destination}`;
      case 'timer':
        return `${a.id} timer ${a.delayMs} unless ${a.unless.join(',')} [${summary(a.actions).join(' | ')}]`;
      default:
        return `${a.id} ${a.type}`;
    }
  });
}

describe('the example config', async () => {
  const { rules } = await loadConfig('config/bridge.example.yaml', { env: {}, allowMissingEnv: true });
  const waba = { id: 'ch_waba_1', name: 'WA', engine: 'whatsapp' };

  it('escalates a complaint, stops, and starts an SLA timer', () => {
    const plan = evaluateRules(
      rules,
      event({ text: 'Saya KECEWA, minta refund!', channel: waba }),
      noFacts,
      MON_10,
    );
    expect(plan.outcomes.map((o) => [o.rule, o.status, o.reason])).toEqual([
      ['escalate-complaints', 'matched', "text has keywords 'refund', 'kecewa'"],
      ['catalog', 'not_matched', "skipped: an earlier rule 'escalate-complaints' has stop: true"],
      ['after-hours', 'not_matched', "skipped: an earlier rule 'escalate-complaints' has stop: true"],
      ['ai-unsure', 'not_matched', "skipped: an earlier rule 'escalate-complaints' has stop: true"],
    ]);
    expect(summary(plan.actions)).toEqual([
      "escalate-complaints#0 note Escalated by escalate-complaints: customer wrote 'kecewa'",
      'escalate-complaints#1 need_human',
      'escalate-complaints#2 forward crm',
      'escalate-complaints#3 timer 900000 unless agent_reply [escalate-complaints#3.0 note No agent reply 15 minutes after escalation. | escalate-complaints#3.1 forward crm]',
    ]);
  });

  it('sends the catalog PDF during business hours and says why the others did not match', () => {
    const plan = evaluateRules(rules, event({ text: 'minta katalog dong', channel: waba }), noFacts, MON_10);
    expect(plan.outcomes.map((o) => [o.rule, o.status, o.reason])).toEqual([
      [
        'escalate-complaints',
        'not_matched',
        'text has none of the keywords [refund, komplain, kecewa, marah, tidak puas]',
      ],
      ['catalog', 'matched', "text has keyword 'katalog'"],
      ['after-hours', 'not_matched', 'business hours are open (Mon 10:00 Asia/Jakarta)'],
      ['ai-unsure', 'not_matched', 'event kind is message_in, rule is on ai_reply'],
    ]);
    expect(plan.actions).toEqual([
      {
        id: 'catalog#0',
        rule: 'catalog',
        type: 'reply',
        message: {
          media: {
            url: 'https://cdn.example.com/katalog.pdf',
            type: 'document',
            name: 'katalog.pdf',
            caption: 'Katalog terbaru',
          },
        },
        replyToMessageId: null,
        once: null,
        window: {
          applies: true,
          channelKind: 'whatsapp_api',
          hours: 24,
          closesAt: '2026-11-24T03:00:00.000Z',
        },
        whenClosed: [
          {
            id: 'catalog#0~closed.0',
            rule: 'catalog',
            type: 'note',
            text: 'Reply not sent: the 24-hour window is closed (0s). Use a template.',
          },
          { id: 'catalog#0~closed.1', rule: 'catalog', type: 'need_human' },
        ],
      },
    ]);
  });

  it('answers after hours once per conversation', () => {
    const e = event({ text: 'halo', senderName: 'Sari', channel: waba }, SUN_10);
    const first = evaluateRules(rules, e, noFacts, SUN_10);
    expect(first.outcomes[2]).toMatchObject({
      status: 'matched',
      reason: 'business hours are closed (Sun 10:00 Asia/Jakarta)',
    });
    expect(summary(first.actions)).toEqual([
      'after-hours#0 reply Terima kasih Sari! Tim kami kembali pada jam kerja.',
    ]);
    expect(first.actions[0]).toMatchObject({ once: { key: 'after-hours#0', ttlMs: 12 * 3_600_000 } });

    const threeHoursLater = new Date(SUN_10.getTime() + 3 * 3_600_000);
    const facts = { ...noFacts, onceMarks: { 'after-hours#0': SUN_10.toISOString() } };
    const again = evaluateRules(
      rules,
      event({ text: 'halo?', channel: waba }, threeHoursLater),
      facts,
      threeHoursLater,
    );
    expect(again.outcomes[2]).toMatchObject({
      status: 'not_matched',
      reason: 'suppressed: once_per_conversation 12h (last 3h ago)',
    });
    expect(again.actions).toEqual([]);

    const nextDay = new Date(SUN_10.getTime() + 13 * 3_600_000); // Sun 23:00 WIB, still closed
    const later = evaluateRules(rules, event({ text: 'halo?', channel: waba }, nextDay), facts, nextDay);
    expect(summary(later.actions)).toHaveLength(1);
  });

  it('hands an unsure AI reply to the team', () => {
    const plan = evaluateRules(
      rules,
      event({ kind: 'ai_reply', text: 'Maaf, saya tidak tahu.' }),
      noFacts,
      MON_10,
    );
    expect(plan.outcomes.map((o) => o.status)).toEqual([
      'not_matched',
      'not_matched',
      'not_matched',
      'matched',
    ]);
    expect(plan.outcomes[0]?.reason).toBe('event kind is ai_reply, rule is on message_in');
    expect(summary(plan.actions)).toEqual([
      'ai-unsure#0 need_human',
      'ai-unsure#1 note The AI was unsure; handed to the team.',
    ]);
  });

  it('plans when_closed instead of a reply when the window is already closed', () => {
    // An agent-side event two days after the customer's last message: nothing opens the window.
    // (A rule on agent_reply may not reply at all: it could answer the bridge's own echoed sends.)
    const reply = rulesFrom(
      `  - { name: nudge, on: assigned, then: [ { reply: { text: "Masih ada yang bisa dibantu?" } } ] }\n`,
    );
    const last = new Date('2026-11-21T02:00:00Z');
    const facts = { ...noFacts, lastCustomerMessageAt: last };
    const plan = evaluateRules(reply, event({ kind: 'assigned', channel: waba }), facts, MON_10);
    expect(summary(plan.actions)).toEqual([
      'nudge#0~closed.0 note Window closed (25h) for nudge',
      'nudge#0~closed.1 need_human',
    ]);
    expect(plan.outcomes[0]?.notes).toEqual([
      'action nudge#0 (reply): the 24-hour reply window of this whatsapp_api conversation is closed (closed 25h ago); when_closed actions planned instead',
    ]);
  });
});

describe('conditions', () => {
  const rules = rulesFrom(`  - name: all-any-not
    on: [ message_in, ai_reply ]
    if:
      all:
        - any: [ { engine: telegram }, { channel_name: "VIP Line" } ]
        - not: { text: { any_keywords: [ spam ] } }
    then: [ { note: "vip {{event.channel.engine}}" } ]
  - name: first
    on: message_in
    if: { first_message: true, content_type: text }
    then: [ { note: "welcome {{customer.name}}" } ]
  - name: media
    on: message_in
    if: { has_media: true, sender: [ Budi, Sari ] }
    then: [ { note: media } ]
  - name: human
    on: message_in
    if: { need_human: false, channel_id: ch_x }
    then: [ { note: ai-mode } ]
  - name: order
    on: message_in
    if: { text: { regex: "(?i)order\\\\s*#?(\\\\d+)", all_keywords: [ status, order ] } }
    then: [ { note: "order {{match.regex_match}} / {{match.keywords}}" } ]
`);

  it.each([
    [
      { channel: { id: 'x', name: 'Other', engine: 'telegram' }, text: 'hi' },
      noFacts,
      ['all-any-not#0 note vip telegram'],
    ],
    [
      { channel: { id: 'x', name: 'vip line', engine: 'whatsapp' }, text: 'hi' },
      noFacts,
      ['all-any-not#0 note vip whatsapp'],
    ],
    [{ channel: { id: 'x', name: 'vip line', engine: 'whatsapp' }, text: 'SPAM!' }, noFacts, []],
    [{ text: 'halo' }, { ...noFacts, isFirstCustomerMessage: true }, ['first#0 note welcome Budi']],
    [
      { text: 'halo', contentType: 'image' },
      { ...noFacts, isFirstCustomerMessage: true },
      ['media#0 note media'],
    ],
    [
      { attachments: [{ url: 'https://x/a.jpg', mimeType: 'image/jpeg' }], senderName: 'sari' },
      noFacts,
      ['media#0 note media'],
    ],
    [{ attachments: [{ url: 'https://x/a.jpg', mimeType: 'image/jpeg' }], senderName: 'Eko' }, noFacts, []],
    [
      { channel: { id: 'ch_x', name: null, engine: 'webchat' }, needHuman: false },
      noFacts,
      ['human#0 note ai-mode'],
    ],
    [{ channel: { id: 'ch_x', name: null, engine: 'webchat' }, needHuman: true }, noFacts, []],
    [{ text: 'Status ORDER #123 please' }, noFacts, ['order#0 note order ORDER #123 / status, order']],
    [{ text: 'status of my order' }, noFacts, []],
    [{ text: 'order #5' }, noFacts, []],
  ] as [Partial<ConversationEvent>, ConversationFacts, string[]][])('%j', (overrides, facts, expected) => {
    expect(summary(evaluateRules(rules, event(overrides), facts, MON_10).actions)).toEqual(expected);
  });

  it('explains each failed test', () => {
    const plan = evaluateRules(
      rules,
      event({ text: 'status of my order', contentType: 'text' }),
      noFacts,
      MON_10,
    );
    expect(plan.outcomes.map((o) => o.reason)).toEqual([
      'none of any: matched (channel engine is "whatsapp", rule wants "telegram"; channel name is "WhatsApp", rule wants "VIP Line")',
      "this is not the customer's first message",
      'the message has no media',
      'channel id is "ch_wa_1", rule wants "ch_x"',
      'text does not match regex /(?i)order\\s*#?(\\d+)/',
    ]);
  });

  it('matches text in the caption of a media message', () => {
    const plan = evaluateRules(rules, event({ text: '', caption: 'order 77 status?' }), noFacts, MON_10);
    expect(summary(plan.actions)).toEqual(['order#0 note order order 77 / status, order']);
  });

  it('regex matching cannot hang on a catastrophic pattern', () => {
    const evil = rulesFrom(
      `  - { name: evil, on: message_in, if: { text: { regex: "(a+)+$" } }, then: [ { note: x } ] }\n`,
    );
    const started = cpuMs();
    const plan = evaluateRules(evil, event({ text: `${'a'.repeat(50_000)}!` }), noFacts, MON_10);
    expect(plan.actions).toEqual([]);
    expect(cpuMs() - started).toBeLessThan(2_000);
  });
});

describe('timers, cooldowns and reply options', () => {
  it('renders timer children now and lets them be cancelled by several kinds', () => {
    const rules = rulesFrom(`  - name: sla
    on: message_in
    then:
      - after: 1h
        unless: [ agent_reply, assigned ]
        then: [ { note: "still waiting, {{customer.name}}" }, { reply: { text: "Kami segera membalas." } } ]
`);
    const plan = evaluateRules(
      rules,
      event({ channel: { id: 'ch_waba_1', name: null, engine: 'whatsapp' } }),
      noFacts,
      MON_10,
    );
    const [timer] = plan.actions;
    expect(timer).toMatchObject({
      id: 'sla#0',
      type: 'timer',
      delayMs: 3_600_000,
      unless: ['agent_reply', 'assigned'],
    });
    expect(timer?.type === 'timer' && timer.actions.map((a) => a.id)).toEqual(['sla#0.0', 'sla#0.1']);
    // The timer's reply carries the window so the worker can check it when the timer fires.
    expect(timer?.type === 'timer' && timer.actions[1]).toMatchObject({
      type: 'reply',
      window: { applies: true, channelKind: 'whatsapp_api', closesAt: '2026-11-24T03:00:00.000Z' },
      whenClosed: [{ id: 'sla#0.1~closed.0' }, { id: 'sla#0.1~closed.1' }],
    });
  });

  it('suppresses a rule in its cooldown and reports the cooldown to record', () => {
    const rules = rulesFrom(`  - { name: ping, on: message_in, cooldown: 10m, then: [ { note: pong } ] }\n`);
    const fired = evaluateRules(rules, event(), noFacts, MON_10);
    expect(fired.outcomes[0]).toMatchObject({ status: 'matched', cooldownMs: 600_000 });
    const soon = new Date(MON_10.getTime() + 3 * 60_000);
    const facts = { ...noFacts, cooldowns: { ping: MON_10.toISOString() } };
    expect(evaluateRules(rules, event({}, soon), facts, soon).outcomes[0]).toEqual({
      rule: 'ping',
      status: 'not_matched',
      reason: 'suppressed: cooldown 10m (last fired 3m ago)',
      notes: [],
      cooldownMs: null,
    });
  });

  it('replies to the message when asked and leaves other channels without a window', () => {
    const rules = rulesFrom(
      `  - { name: r, on: message_in, then: [ { reply: { text: ok, reply_to_message: true } } ] }\n`,
    );
    const plan = evaluateRules(
      rules,
      event({ channel: { id: 't', name: null, engine: 'telegram' } }),
      noFacts,
      MON_10,
    );
    expect(plan.actions[0]).toMatchObject({
      replyToMessageId: 'm-1',
      window: { applies: false, channelKind: 'telegram', closesAt: null },
    });
  });

  it('does not let a suppressed rule stop later ones', () => {
    const rules =
      rulesFrom(`  - { name: a, on: message_in, stop: true, then: [ { reply: { text: one, once_per_conversation: 1d } } ] }
  - { name: b, on: message_in, then: [ { note: two } ] }
`);
    const facts = { ...noFacts, onceMarks: { 'a#0': MON_10.toISOString() } };
    const plan = evaluateRules(rules, event(), facts, MON_10);
    expect(plan.outcomes.map((o) => o.status)).toEqual(['not_matched', 'matched']);
    expect(summary(plan.actions)).toEqual(['b#0 note two']);
  });
});

describe('replyWindow', () => {
  const config = {
    channels: [
      {
        match: { engine: 'whatsapp', channelId: 'ch_waba_1', channelName: undefined },
        kind: 'whatsapp_api' as const,
      },
    ],
    replyWindow: { appliesTo: ['whatsapp_api' as const], hours: 24 },
  };
  const channel = { id: 'ch_waba_1', name: null, engine: 'whatsapp' };

  it.each([
    [new Date('2026-11-22T03:00:01Z'), { open: true, closesAt: '2026-11-23T03:00:01.000Z', closedForMs: 0 }],
    [new Date('2026-11-22T03:00:00Z'), { open: false, closesAt: '2026-11-23T03:00:00.000Z', closedForMs: 0 }],
    [
      new Date('2026-11-22T01:00:00Z'),
      { open: false, closesAt: '2026-11-23T01:00:00.000Z', closedForMs: 7_200_000 },
    ],
    [null, { open: false, closesAt: null, closedForMs: null }],
  ])('last customer message %s', (last, expected) => {
    expect(replyWindow(config, channel, last, MON_10)).toEqual({
      applies: true,
      channelKind: 'whatsapp_api',
      ...expected,
    });
  });

  // Issue 12: `engine: waba` in a rule names the platform's raw engine; `whatsapp` every WhatsApp.
  it('an engine condition matches the raw engine name or the normalised one', () => {
    const rules = rulesFrom(`  - { name: api, on: message_in, if: { engine: waba }, then: [ { note: api } ] }
  - { name: any-wa, on: message_in, if: { engine: whatsapp }, then: [ { note: wa } ] }
`);
    const notes = (rawEngine: string) =>
      summary(
        evaluateRules(
          rules,
          event({ channel: { id: 'c', name: null, engine: 'whatsapp', rawEngine } }),
          noFacts,
          MON_10,
        ).actions,
      );
    expect(notes('waba')).toEqual(['api#0 note api', 'any-wa#0 note wa']);
    expect(notes('wa')).toEqual(['any-wa#0 note wa']);
  });

  it('maps channels to kinds, first match wins', () => {
    expect(channelKind(config, channel)).toBe('whatsapp_api');
    expect(channelKind(config, { ...channel, id: 'other', engine: 'telegram' })).toBe('telegram');
    expect(replyWindow(config, { ...channel, id: 'other', engine: 'telegram' }, null, MON_10)).toEqual({
      applies: false,
      channelKind: 'telegram',
      open: true,
      closesAt: null,
      closedForMs: null,
    });
  });

  // Issue 12: with no channels: entry the engine decides, by the platform's raw name.
  const noChannels = {
    channels: [],
    replyWindow: { appliesTo: [...DEFAULT_WINDOW_KINDS], hours: 24 },
  };
  it.each<[string | null, string, string | null, 'channels' | 'default' | 'none', boolean]>([
    ['waba', 'whatsapp', 'whatsapp_api', 'default', false],
    ['wa', 'whatsapp', 'whatsapp_qr', 'default', true],
    ['whatsapp', 'whatsapp', 'whatsapp_api', 'default', true],
    ['instagram', 'instagram', 'instagram', 'default', false],
    ['ig', 'instagram', 'instagram', 'default', false],
    ['facebook', 'facebook', 'messenger', 'default', false],
    ['telegram', 'telegram', 'telegram', 'default', false],
    ['line', 'line', null, 'none', false],
    // A job queued by an older bridge (no raw engine): the normalised name, so the safe side.
    [null, 'whatsapp', 'whatsapp_api', 'default', true],
  ])('without channels:, raw engine %s (normalised %s) is %s', (rawEngine, engine, kind, source, assumed) => {
    const resolved = resolveChannelKind(noChannels, {
      id: 'ch_x',
      name: null,
      engine,
      ...(rawEngine === null ? {} : { rawEngine }),
    });
    expect(resolved).toMatchObject({ kind, source });
    expect(resolved.assumption !== null).toBe(assumed);
  });

  it('without channels:, the window holds on WhatsApp API, Instagram and Messenger and not on WhatsApp QR', () => {
    const late = new Date(MON_10.getTime() - 25 * 3_600_000);
    const state = (rawEngine: string, engine: string) =>
      replyWindow(noChannels, { id: 'c', name: null, engine, rawEngine }, late, MON_10);
    expect(state('waba', 'whatsapp')).toMatchObject({ applies: true, open: false });
    expect(state('instagram', 'instagram')).toMatchObject({ applies: true, open: false });
    expect(state('facebook', 'facebook')).toMatchObject({ applies: true, open: false });
    expect(state('wa', 'whatsapp')).toMatchObject({ applies: false, open: true, channelKind: 'whatsapp_qr' });
  });

  it('a channels: entry with engine waba matches the raw engine, whatsapp matches every WhatsApp', () => {
    const entries = (engine: string) => ({
      channels: [{ match: { engine, channelId: undefined, channelName: undefined }, kind: 'other' as const }],
    });
    const waba = { id: 'c', name: null, engine: 'whatsapp', rawEngine: 'waba' };
    const wa = { id: 'c', name: null, engine: 'whatsapp', rawEngine: 'wa' };
    expect(resolveChannelKind(entries('waba'), waba)).toMatchObject({ kind: 'other', source: 'channels' });
    expect(resolveChannelKind(entries('waba'), wa)).toMatchObject({ kind: 'whatsapp_qr', source: 'default' });
    expect(resolveChannelKind(entries('whatsapp'), wa)).toMatchObject({ kind: 'other', source: 'channels' });
  });

  it('counts a message_in event as the latest customer message', () => {
    const rules = rulesFrom(`  - { name: r, on: message_in, then: [ { reply: { text: hi } } ] }\n`);
    const facts = { ...noFacts, lastCustomerMessageAt: new Date('2026-11-01T00:00:00Z') };
    const plan = evaluateRules(rules, event({ channel }), facts, MON_10);
    expect(plan.actions[0]).toMatchObject({
      type: 'reply',
      window: { closesAt: '2026-11-24T03:00:00.000Z' },
    });
  });
});
