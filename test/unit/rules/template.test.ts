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

describe('every template field', () => {
  const full: TemplateContext = {
    event: makeEvent({
      kind: 'agent_reply',
      name: 'agent.message_out',
      key: 'agent.message_out|m-7',
      conversationId: 'conv-7',
      messageId: 'm-7',
      text: 'the text',
      caption: 'the caption',
      contentType: 'image',
      channel: { id: 'ch_7', name: 'Main WA', engine: 'whatsapp' },
      business: { id: 'biz-7', name: 'Toko Tujuh' },
      senderName: 'Sari',
      conversationLabel: 'Sari (VIP)',
      aiName: 'Asisten',
      agentName: 'Dewi',
      needHuman: true,
      occurredAt: '2026-11-23T03:00:00.000Z',
      receivedAt: '2026-11-23T03:00:01.000Z',
    }),
    rule: { name: 'r' },
    match: { keyword: 'k', keywords: 'k, l', regexMatch: 'rx' },
    customer: { name: 'Sari' },
    window: { closedFor: '1h', hours: 24 },
    conversation: { id: 'conv-7' },
    burst: { count: 3, text: 'a\nb\nc', firstAt: '2026-11-23T02:59:00.000Z' },
    tags: 'gold, vip',
  };

  it.each([
    ['event.kind', 'agent_reply'],
    ['event.name', 'agent.message_out'],
    ['event.key', 'agent.message_out|m-7'],
    ['event.conversationId', 'conv-7'],
    ['event.messageId', 'm-7'],
    ['event.text', 'the text'],
    ['event.caption', 'the caption'],
    ['event.contentType', 'image'],
    ['event.channel.id', 'ch_7'],
    ['event.channel.name', 'Main WA'],
    ['event.channel.engine', 'whatsapp'],
    ['event.business.id', 'biz-7'],
    ['event.business.name', 'Toko Tujuh'],
    ['event.senderName', 'Sari'],
    ['event.conversationLabel', 'Sari (VIP)'],
    ['event.aiName', 'Asisten'],
    ['event.agentName', 'Dewi'],
    ['event.needHuman', 'true'],
    ['event.occurredAt', '2026-11-23T03:00:00.000Z'],
    ['event.receivedAt', '2026-11-23T03:00:01.000Z'],
    ['rule.name', 'r'],
    ['match.keyword', 'k'],
    ['match.keywords', 'k, l'],
    ['match.regex_match', 'rx'],
    ['customer.name', 'Sari'],
    ['window.closed_for', '1h'],
    ['window.hours', '24'],
    ['conversation.id', 'conv-7'],
    ['burst.count', '3'],
    ['burst.text', 'a\nb\nc'],
    ['burst.first_at', '2026-11-23T02:59:00.000Z'],
    ['tags', 'gold, vip'],
  ])('{{%s}} renders %j', (field, expected) => {
    expect(renderTemplate(compiled(`{{${field}}}`), full)).toBe(expected);
  });

  it('renders the burst and business fields as empty where there is none', () => {
    const none = { ...full, event: makeEvent({ business: null }), burst: undefined };
    expect(
      renderTemplate(
        compiled('[{{burst.count}}|{{burst.text}}|{{burst.first_at}}|{{event.business.id}}]'),
        none,
      ),
    ).toBe('[|||]');
  });

  it('lists the fields a template uses, in order, and keeps its source', () => {
    const t = compiled('Hi {{customer.name}}, re {{match.keyword}}: {{customer.name}}');
    expect(t.fields).toEqual(['customer.name', 'match.keyword', 'customer.name']);
    expect(t.source).toBe('Hi {{customer.name}}, re {{match.keyword}}: {{customer.name}}');
    expect(renderTemplate(t, context)).toBe('Hi Budi, re refund: Budi');
  });

  it('reports every problem of a template, not only the first', () => {
    expect(compileTemplate('{{nope}} and {{a b}} and {{customer.x}}')).toEqual({
      errors: [
        'unknown template variable {{nope}}: "nope" is not one of event, rule, match, customer, window, conversation, burst, tags',
        '{{a b}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
        'unknown template variable {{customer.x}}: customer has {{customer.name}}',
      ],
    });
  });

  it('names a root without fields as a field of its own', () => {
    expect(compileTemplate('{{tags.gold}}')).toEqual({
      errors: ['unknown template variable {{tags.gold}}: {{tags}} has no fields: write {{tags}}'],
    });
  });

  it('keeps text between, before and after fields, and a lone "}}"', () => {
    expect(renderTemplate(compiled('a}}b{{rule.name}}c{{rule.name}}'), context)).toBe(
      'a}}bescalatecescalate',
    );
    expect(renderTemplate(compiled(''), context)).toBe('');
  });

  it.each([
    ['exactly the cap', MAX_RENDERED_LENGTH, '', 'x'.repeat(MAX_RENDERED_LENGTH)],
    ['the cap, then one more character', MAX_RENDERED_LENGTH, '!', `${'x'.repeat(MAX_RENDERED_LENGTH - 1)}…`],
    ['one over the cap', MAX_RENDERED_LENGTH + 1, '', `${'x'.repeat(MAX_RENDERED_LENGTH - 1)}…`],
  ])('renders %s', (_label, length, after, expected) => {
    const sized = { ...context, event: makeEvent({ text: 'x'.repeat(length) }) };
    expect(renderTemplate(compiled(`{{event.text}}${after}`), sized)).toBe(expected);
  });
});

describe('compiled template parts', () => {
  it('holds text and fields in order, without empty text between adjacent fields or at the end', () => {
    const t = compiled('{{rule.name}}{{customer.name}}!');
    expect(t.parts).toEqual([
      { path: 'rule.name', get: expect.any(Function) },
      { path: 'customer.name', get: expect.any(Function) },
      '!',
    ]);
    expect(compiled('a{{rule.name}}').parts).toEqual(['a', { path: 'rule.name', get: expect.any(Function) }]);
  });

  it('lists every field of a root in the message about an unknown one', () => {
    expect(compileTemplate('{{burst.size}}')).toEqual({
      errors: [
        'unknown template variable {{burst.size}}: burst has {{burst.count}}, {{burst.text}}, {{burst.first_at}}',
      ],
    });
  });
});
