import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load-config.js';
import { CANONICAL_ENGINES, PLATFORM_ENGINE_NAMES } from '../../../src/rules/engine-values.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { TEMPLATE_FIELDS } from '../../../src/rules/template.js';
import { makeEvent } from '../../support/make-event.js';

const RULES = readFileSync('docs/rules.md', 'utf8');
const section = RULES.slice(RULES.indexOf('## The rules language'), RULES.indexOf('## Recipes'));

describe("the rules reference's language section stays complete (issue 13, item 13)", () => {
  it.each(TEMPLATE_FIELDS)('lists the template variable %s', (field) => {
    expect(section).toContain(`\`${field}\``);
  });

  it.each([...CANONICAL_ENGINES, ...PLATFORM_ENGINE_NAMES])('lists the engine value %s', (engine) => {
    expect(section).toContain(`\`${engine}\``);
  });

  it('says that keys under if: are ANDed and that a value can be a list', () => {
    expect(section).toContain('must **all** hold (they are ANDed)');
    expect(section).toContain('takes one value or a **list**');
  });

  it('its all/any/not example is a valid condition that means what the comments say', () => {
    const yaml = /```yaml\n(\s*if:[\s\S]*?)```/.exec(section)?.[1];
    expect(yaml).toBeDefined();
    const condition = (yaml ?? '').replace(/^ {2}/gm, '').replace(/^if:/, '');
    const { rules } = parseConfigText(
      `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
business_hours: { weekly: { mon-fri: "08:00-17:00" } }
rules:
  - name: r
    on: message_in
    then: [ { need_human: true } ]
    if:
${condition.replace(/^/gm, '      ')}
`,
      { fileName: 'rules.yaml', env: {} },
    );
    const sunday = new Date('2026-11-29T13:00:00.000Z');
    const at = (overrides: Parameters<typeof makeEvent>[0]) =>
      evaluateRules(
        rules,
        makeEvent({ occurredAt: sunday.toISOString(), ...overrides }),
        {
          lastCustomerMessageAt: null,
          isFirstCustomerMessage: false,
          onceMarks: {},
        },
        sunday,
      ).matched.length === 1;
    expect(at({ text: 'mau refund' })).toBe(true);
    expect(at({ text: 'halo', channel: { id: 'x', name: 'VIP Line', engine: 'instagram' } })).toBe(true);
    expect(at({ text: 'halo' })).toBe(false);
    expect(at({ text: 'mau refund', needHuman: true })).toBe(false);
    expect(at({ text: 'mau refund', channel: { id: 'x', name: null, engine: 'telegram' } })).toBe(false);
  });
});
