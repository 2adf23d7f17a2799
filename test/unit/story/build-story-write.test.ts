import { describe, expect, it } from 'vitest';
import { customerKey, customersIn, parseCustomer } from '../../../src/base/customer-match.js';
import { parseStorySettings } from '../../../src/config/config-schema.js';
import type { PlannedAction } from '../../../src/rules/plan.js';
import { buildEventStory, verdictWords } from '../../../src/story/build-story-write.js';
import { type StoryEntry, StoryEntrySchema } from '../../../src/story/story-schema.js';
import { makeEvent } from '../../support/make-event.js';

const NOW = Date.parse('2026-11-28T03:00:00.000Z');

function build(
  overrides: Partial<Parameters<typeof buildEventStory>[0]> = {},
  settings = parseStorySettings(),
) {
  const write = buildEventStory(
    {
      event: makeEvent({
        conversationId: 'C1',
        text: 'saya mau refund, wa 0812 3456 7890',
        senderName: 'Siti Aminah',
      }),
      now: NOW,
      actions: [],
      matched: [],
      reports: [],
      cancelledTimers: [],
      windowApplies: false,
      windowOpenUntil: null,
      attempts: 1,
      ownSend: false,
      ...overrides,
    },
    settings,
  );
  const entries = write.entries.map((line) => StoryEntrySchema.parse(JSON.parse(line)) as StoryEntry);
  return { write, entries };
}

describe('buildEventStory', () => {
  it("keeps every rule's verdict in explain's words", () => {
    const { entries } = build({
      matched: ['escalate'],
      outcomes: [
        {
          rule: 'escalate',
          status: 'matched',
          reason: "text has keyword 'refund'",
          notes: [],
          cooldownMs: null,
        },
        {
          rule: 'catalog',
          status: 'not_matched',
          reason: "skipped: an earlier rule 'escalate' has stop: true",
          notes: [],
          cooldownMs: null,
        },
      ],
    });
    expect(entries.filter((e) => e.kind === 'verdict').map((e) => e.words)).toEqual([
      "MATCH escalate: text has keyword 'refund'",
      "no catalog: skipped: an earlier rule 'escalate' has stop: true",
    ]);
  });

  it('a re-run of a frozen plan says which rules matched', () => {
    const { entries } = build({ matched: ['escalate'] });
    expect(entries.filter((e) => e.kind === 'verdict')).toEqual([
      expect.objectContaining({ rule: 'escalate', matched: true }),
    ]);
  });

  it('an escalation: outcome, stats, the wait for an agent begins', () => {
    const actions: PlannedAction[] = [{ id: 'escalate#1', rule: 'escalate', type: 'need_human' }];
    const { write, entries } = build({
      matched: ['escalate'],
      actions,
      reports: [{ id: 'escalate#1', type: 'need_human', rule: 'escalate', state: 'done' }],
    });
    expect(entries.find((e) => e.kind === 'action')).toMatchObject({ outcome: 'done', attempts: 1 });
    expect(write.terms).toEqual(expect.arrayContaining(['r:escalate', 'o:escalated']));
    expect(write.stats).toEqual({ ev: 1, 'a:need_human': 1, esc: 1 });
    expect(write.escalated).toBe(true);
  });

  it('a reply the window held back is a blocked reply', () => {
    const { write } = build({
      reports: [
        {
          id: 'r#0',
          type: 'reply',
          rule: 'r',
          state: 'skipped',
          detail: 'reply window closed (last customer message 2026-11-26T00:00:00.000Z)',
        },
      ],
    });
    expect(write.metaSet['o:reply_blocked']).toBe('1');
    expect(write.stats.rb).toBe(1);
  });

  it('done after retries is retried, with its attempts', () => {
    const { entries } = build({
      attempts: 3,
      reports: [{ id: 'n#0', type: 'note', rule: 'n', state: 'done' }],
    });
    expect(entries.find((e) => e.kind === 'action')).toMatchObject({ outcome: 'retried', attempts: 3 });
  });

  it("indexes the customer's phone number, e-mail address and name words", () => {
    const { write } = build();
    expect(write.terms).toEqual(expect.arrayContaining(['n:siti', 'n:aminah', 'p:34567890']));
    expect(write.metaSet['cp:81234567890']).toBe('0812 3456 7890');
    expect(write.metaSet.name).toBe('Siti Aminah');
  });

  it("an agent's reply names no customer", () => {
    const { write } = build({ event: makeEvent({ kind: 'agent_reply', text: 'call us at 0812 9999 8888' }) });
    expect(write.terms).toEqual([]);
    expect(write.agentReply).toBe(true);
  });

  it('keeps the text as story.redact allows', () => {
    const masked = build({}, parseStorySettings({ redact: { phones: true } })).entries[0];
    expect(masked).toMatchObject({ kind: 'event', redacted: true });
    expect(masked?.kind === 'event' ? masked.text : '').not.toContain('3456');
    const none = build({}, parseStorySettings({ redact: { texts: true } })).entries[0];
    expect(none).toMatchObject({ kind: 'event', text: null, redacted: true });
  });

  it('a tag, an untag, a pending timer and the window', () => {
    const actions: PlannedAction[] = [
      { id: 't#0', rule: 't', type: 'tag', tags: ['vip'], forMs: 3_600_000 },
      { id: 't#1', rule: 't', type: 'untag', tags: ['old'] },
      {
        id: 't#2',
        rule: 't',
        type: 'timer',
        delayMs: 900_000,
        unless: ['agent_reply'],
        actions: [],
      } as unknown as PlannedAction,
    ];
    const { write, entries } = build({
      actions,
      reports: actions.map((a) => ({ id: a.id, type: a.type, rule: a.rule, state: 'done' as const })),
      windowApplies: true,
      windowOpenUntil: new Date(NOW + 86_400_000),
    });
    expect(entries.filter((e) => e.kind === 'tag')).toEqual([
      expect.objectContaining({ name: 'vip', until: new Date(NOW + 3_600_000).toISOString() }),
      expect.objectContaining({ name: 'old', removed: true }),
    ]);
    expect(entries.find((e) => e.kind === 'timer')).toMatchObject({
      state: 'pending',
      due: new Date(NOW + 900_000).toISOString(),
      by: 'cancelled by agent_reply',
    });
    expect(entries.find((e) => e.kind === 'window')).toMatchObject({
      openUntil: new Date(NOW + 86_400_000).toISOString(),
    });
    expect(write.metaDel).toEqual(['g:old']);
  });
});

describe('verdictWords', () => {
  it.each([
    ['matched', undefined, 'MATCH r: why'],
    ['not_matched', undefined, 'no r: why'],
    ['not_matched', true, 'burst r: why'],
  ] as const)('%s (debounced %s)', (status, debounced, words) => {
    expect(verdictWords({ rule: 'r', status, reason: 'why', ...(debounced ? { debounced } : {}) })).toBe(
      words,
    );
  });
});

describe('customer keys: one number however written', () => {
  it.each(['+62 812-3456-7890', '0812 3456 7890', '81234567890', '(0812) 3456.7890'])('%s', (written) => {
    expect(customerKey(parseCustomer(written))).toBe('p:34567890');
    expect(customersIn(`nomor saya ${written} ya`).map(customerKey)).toEqual(['p:34567890']);
  });
  it('an e-mail address in any case', () => {
    expect(customerKey(parseCustomer('Budi@Example.com'))).toBe('e:budi@example.com');
    expect(customersIn('mail budi@example.com.').map(customerKey)).toEqual(['e:budi@example.com']);
  });
});
