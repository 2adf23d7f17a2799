import { describe, expect, it } from 'vitest';
import {
  type CompiledTemplate,
  compileTemplate,
  MAX_RENDERED_LENGTH,
  renderTemplate,
  type TemplateContext,
} from '../../../src/rules/template.js';
import { makeEvent } from '../../support/make-event.js';

function compiled(source: string): CompiledTemplate {
  const result = compileTemplate(source);
  if ('errors' in result) throw new Error(result.errors.join('; '));
  return result;
}

const event = makeEvent({
  text: 'minta refund',
  conversationId: 'conv-9',
  messageId: 'm-1',
  senderName: 'Budi',
  channel: { id: 'ch_1', name: 'WA', engine: 'whatsapp' },
});
const context: TemplateContext = {
  event,
  rule: { name: 'escalate' },
  match: { keyword: 'refund', keywords: 'refund, kecewa', regexMatch: 'order 42' },
  customer: { name: 'Budi' },
  window: { closedFor: '3h 5m', hours: 24 },
  conversation: { id: 'conv-9' },
};

describe('templates', () => {
  it.each([
    ['{{rule.name}}', 'escalate'],
    ['{{match.keyword}}|{{match.keywords}}|{{match.regex_match}}', 'refund|refund, kecewa|order 42'],
    ['Hi {{ customer.name }}!', 'Hi Budi!'],
    ['{{window.closed_for}} of {{window.hours}}h', '3h 5m of 24h'],
    ['{{conversation.id}}', 'conv-9'],
    [
      '{{event.text}} / {{event.channel.engine}} / {{event.messageId}} / {{event.needHuman}}',
      'minta refund / whatsapp / m-1 / false',
    ],
    ['no fields', 'no fields'],
    ['single } and { braces', 'single } and { braces'],
  ])('%s renders %j', (source, expected) => {
    expect(renderTemplate(compiled(source), context)).toBe(expected);
  });

  it.each([
    [
      '{{custmer.name}}',
      'unknown template variable {{custmer.name}}: "custmer" is not one of event, rule, match, customer, window, conversation, burst, tags',
    ],
    ['{{customer.phone}}', 'unknown template variable {{customer.phone}}: customer has {{customer.name}}'],
    [
      '{{constructor.constructor}}',
      'unknown template variable {{constructor.constructor}}: "constructor" is not one of event, rule, match, customer, window, conversation, burst, tags',
    ],
    [
      '{{__proto__}}',
      'unknown template variable {{__proto__}}: "__proto__" is not one of event, rule, match, customer, window, conversation, burst, tags',
    ],
    [
      '{{event.constructor}}',
      expect.stringMatching(
        /^unknown template variable \{\{event\.constructor\}\}: event has \{\{event\.kind\}\}/,
      ),
    ],
    [
      '{{event.__proto__.polluted}}',
      expect.stringMatching(/^unknown template variable \{\{event\.__proto__\.polluted\}\}/),
    ],
    [
      '{{ process.exit(1) }}',
      '{{process.exit(1)}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
    ],
    [
      '{{#each x}}',
      '{{#each x}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
    ],
    [
      '{{}}',
      '{{}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
    ],
    ['Hello {{customer.name', 'unclosed "{{" at character 7: close it with "}}"'],
  ])('%s is a load error', (source, message) => {
    expect(compileTemplate(source)).toEqual({ errors: [message] });
  });

  it('renders a missing value as an empty string', () => {
    const noName = {
      ...context,
      event: makeEvent({ conversationId: null, senderName: null, business: null }),
    };
    expect(
      renderTemplate(
        compiled('[{{event.conversationId}}][{{event.senderName}}][{{event.business.name}}]'),
        noName,
      ),
    ).toBe('[][][]');
  });

  it('inserts values as text and never evaluates them again', () => {
    const tricky = { ...context, customer: { name: '{{rule.name}} ${process.env.HOME}' } };
    expect(renderTemplate(compiled('Hi {{customer.name}}'), tricky)).toBe(
      'Hi {{rule.name}} ${process.env.HOME}',
    );
  });

  it(`caps the rendered text at ${MAX_RENDERED_LENGTH} characters`, () => {
    const big = { ...context, event: makeEvent({ text: 'x'.repeat(100_000) }) };
    const out = renderTemplate(compiled('{{event.text}}{{event.text}}{{event.text}}'), big);
    expect(out).toHaveLength(MAX_RENDERED_LENGTH);
    expect(out.endsWith('…')).toBe(true);
  });
});
