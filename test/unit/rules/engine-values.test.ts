import { describe, expect, it } from 'vitest';
import { type ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { evaluateRules } from '../../../src/rules/evaluate-rules.js';
import { channelKind } from '../../../src/rules/reply-window.js';
import { makeEvent } from '../../support/make-event.js';

const HEADER = `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
`;

const facts = { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };

function matches(engineValue: string, eventEngine: string, rawEngine?: string): boolean {
  const { rules } = parseConfigText(
    `${HEADER}rules:\n  - { name: r, on: message_in, if: { engine: ${engineValue} }, then: [ { need_human: true } ] }\n`,
    { fileName: 'engine.yaml', env: {} },
  );
  const plan = evaluateRules(
    rules,
    makeEvent({
      channel: { id: 'c', name: null, engine: eventEngine, ...(rawEngine ? { rawEngine } : {}) },
    }),
    facts,
    new Date(),
  );
  return plan.matched.length === 1;
}

function problems(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'engine.yaml', env: {} });
  } catch (error) {
    return (error as ConfigError).issues.map(formatConfigIssue);
  }
  return [];
}

describe('engine values (issue 13, item 6): every value that validates can match', () => {
  it.each([
    ['messenger', 'facebook'],
    ['fb', 'facebook'],
    ['ig', 'instagram'],
    ['tg', 'telegram'],
    ['web', 'webchat'],
    ['facebook', 'facebook'],
    ['Instagram', 'instagram'],
  ])('engine: %s matches an event whose engine is %s', (value, eventEngine) => {
    expect(matches(value, eventEngine)).toBe(true);
  });

  it('engine: messenger does not match another engine', () => {
    expect(matches('messenger', 'instagram')).toBe(false);
  });

  it("WhatsApp's spellings match the platform's raw engine only: waba (API) is not wa (QR)", () => {
    expect(matches('waba', 'whatsapp', 'waba')).toBe(true);
    expect(matches('wa', 'whatsapp', 'wa')).toBe(true);
    expect(matches('waba', 'whatsapp', 'wa')).toBe(false);
    expect(matches('wa', 'whatsapp', 'waba')).toBe(false);
    expect(matches('whatsapp', 'whatsapp', 'wa')).toBe(true);
  });

  it('a value no event can carry is refused, with the near miss and the list', () => {
    const found = problems(
      `${HEADER}rules:\n  - { name: r, on: message_in, if: { engine: [ whatsapp, messnger ] }, then: [ { need_human: true } ] }\n`,
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^engine\.yaml:\d+:\d+: rules\.0\.if\.engine\.1: "messnger" is not an engine the platform sends: did you mean "messenger"\?; use one of whatsapp, telegram, instagram, facebook/,
    );
  });

  it('channels[].match.engine is checked and matched the same way', () => {
    expect(
      problems(`${HEADER}channels: [ { match: { engine: instagramm }, kind: instagram } ]\n`)[0],
    ).toContain(
      'channels.0.match.engine: "instagramm" is not an engine the platform sends: did you mean "instagram"?',
    );
    const { config } = parseConfigText(
      `${HEADER}channels: [ { match: { engine: ig }, kind: instagram } ]\n`,
      {
        fileName: 'engine.yaml',
        env: {},
      },
    );
    expect(channelKind(config, { id: 'x', name: null, engine: 'instagram' })).toBe('instagram');
  });
});
