import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load-config.js';
import { businessHoursInstant, evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { makeEvent } from '../../support/make-event.js';

const { rules } = parseConfigText(
  `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
timezone: Asia/Jakarta
business_hours:
  weekly: { mon-fri: "08:00-17:00" }
rules:
  - name: after-hours
    on: message_in
    if: { business_hours: closed }
    then: [ { reply: { text: "Kami kembali pada jam kerja." } } ]
`,
  { fileName: 'hours.yaml', env: {} },
);
const facts = { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };

const FRI_16_55 = '2026-11-27T09:55:00.000Z'; // Fri 16:55 WIB: open
const FRI_17_30 = new Date('2026-11-27T10:30:00.000Z'); // Fri 17:30 WIB: closed
const SUN_20_00 = '2026-11-29T13:00:00.000Z'; // Sun 20:00 WIB: closed
const MON_09_00 = new Date('2026-11-30T02:00:00.000Z'); // Mon 09:00 WIB: open

describe('business hours are judged at the time the customer wrote (issue 13, item 12)', () => {
  it('a message written at 16:55 and processed at 17:30 (a backlog) gets no after-hours reply', () => {
    const plan = evaluateRules(rules, makeEvent({ occurredAt: FRI_16_55 }), facts, FRI_17_30);
    expect(plan.actions).toEqual([]);
    expect(plan.outcomes[0]?.reason).toBe(
      'business hours were open when the message was written (Fri 16:55 Asia/Jakarta)',
    );
  });

  it('a message written on Sunday evening and processed on Monday morning (an outage) gets it', () => {
    const plan = evaluateRules(rules, makeEvent({ occurredAt: SUN_20_00 }), facts, MON_09_00);
    expect(plan.actions.map((a) => a.type)).toEqual(['reply']);
    expect(plan.outcomes[0]?.reason).toBe(
      'business hours were closed when the message was written (Sun 20:00 Asia/Jakarta)',
    );
  });

  it('an event time in the future (platform clock ahead) or unreadable counts as now', () => {
    const now = new Date('2026-11-27T10:30:00.000Z');
    expect(businessHoursInstant({ occurredAt: '2026-11-27T10:31:00.000Z' }, now)).toEqual(now);
    expect(businessHoursInstant({ occurredAt: 'not a time' }, now)).toEqual(now);
    expect(businessHoursInstant({ occurredAt: FRI_16_55 }, now)).toEqual(new Date(FRI_16_55));
  });
});
