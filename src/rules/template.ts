import type { ConversationEvent } from '../events/conversation-event.js';

/**
 * `{{path}}` templates. A path is looked up in a fixed table of allowed fields, never on the
 * objects themselves, so `{{constructor.constructor}}` or `{{__proto__}}` cannot reach anything;
 * there are no helpers and no expressions. Unknown fields are load errors; a field without a
 * value at run time renders as ''.
 */

/** Longest rendered text; a template with many large fields cannot grow past this. */
export const MAX_RENDERED_LENGTH = 4096;

export interface TemplateContext {
  event: ConversationEvent;
  rule: { name: string };
  match: { keyword: string; keywords: string; regexMatch: string };
  customer: { name: string };
  window: { closedFor: string; hours: number };
  conversation: { id: string | null };
  /** A debounced rule's burst: the messages, their text, when the first was received. */
  burst?: { count: number; text: string; firstAt: string } | undefined;
  /** The conversation's tags, sorted and comma-separated ("gold, vip"; rules/tags.ts). */
  tags?: string;
}

type Getter = (ctx: TemplateContext) => string | number | boolean | null | undefined;

const FIELDS: ReadonlyMap<string, Getter> = new Map<string, Getter>([
  ['event.kind', (c) => c.event.kind],
  ['event.name', (c) => c.event.name],
  ['event.key', (c) => c.event.key],
  ['event.conversationId', (c) => c.event.conversationId],
  ['event.messageId', (c) => c.event.messageId],
  ['event.text', (c) => c.event.text],
  ['event.caption', (c) => c.event.caption],
  ['event.contentType', (c) => c.event.contentType],
  ['event.channel.id', (c) => c.event.channel.id],
  ['event.channel.name', (c) => c.event.channel.name],
  ['event.channel.engine', (c) => c.event.channel.engine],
  ['event.business.id', (c) => c.event.business?.id],
  ['event.business.name', (c) => c.event.business?.name],
  ['event.senderName', (c) => c.event.senderName],
  ['event.conversationLabel', (c) => c.event.conversationLabel],
  ['event.aiName', (c) => c.event.aiName],
  ['event.agentName', (c) => c.event.agentName],
  ['event.needHuman', (c) => c.event.needHuman],
  ['event.occurredAt', (c) => c.event.occurredAt],
  ['event.receivedAt', (c) => c.event.receivedAt],
  ['rule.name', (c) => c.rule.name],
  ['match.keyword', (c) => c.match.keyword],
  ['match.keywords', (c) => c.match.keywords],
  ['match.regex_match', (c) => c.match.regexMatch],
  ['customer.name', (c) => c.customer.name],
  ['window.closed_for', (c) => c.window.closedFor],
  ['window.hours', (c) => c.window.hours],
  ['conversation.id', (c) => c.conversation.id],
  ['burst.count', (c) => c.burst?.count],
  ['burst.text', (c) => c.burst?.text],
  ['burst.first_at', (c) => c.burst?.firstAt],
  ['tags', (c) => c.tags],
]);

export const TEMPLATE_ROOTS = [
  'event',
  'rule',
  'match',
  'customer',
  'window',
  'conversation',
  'burst',
  'tags',
] as const;
export const TEMPLATE_FIELDS: readonly string[] = [...FIELDS.keys()];

type Part = string | { path: string; get: Getter };

export interface CompiledTemplate {
  readonly source: string;
  readonly parts: readonly Part[];
  /** Fields used, so the compiler can check `match.*` against the rule's condition. */
  readonly fields: readonly string[];
}

const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Compiles a template or returns every problem in it. */
export function compileTemplate(source: string): CompiledTemplate | { errors: string[] } {
  const parts: Part[] = [];
  const fields: string[] = [];
  const errors: string[] = [];
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open === -1) {
      parts.push(source.slice(i));
      break;
    }
    if (open > i) parts.push(source.slice(i, open));
    const close = source.indexOf('}}', open + 2);
    if (close === -1) {
      errors.push(`unclosed "{{" at character ${open + 1}: close it with "}}"`);
      break;
    }
    const path = source.slice(open + 2, close).trim();
    i = close + 2;
    if (!PATH.test(path)) {
      errors.push(
        `{{${path}}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers`,
      );
      continue;
    }
    const get = FIELDS.get(path);
    if (!get) {
      errors.push(unknownFieldMessage(path));
      continue;
    }
    parts.push({ path, get });
    fields.push(path);
  }
  return errors.length > 0 ? { errors } : { source, parts, fields };
}

function unknownFieldMessage(path: string): string {
  const root = path.split('.')[0] ?? path;
  if (!(TEMPLATE_ROOTS as readonly string[]).includes(root)) {
    return `unknown template variable {{${path}}}: "${root}" is not one of ${TEMPLATE_ROOTS.join(', ')}`;
  }
  const known = TEMPLATE_FIELDS.filter((f) => f.startsWith(`${root}.`));
  if (known.length === 0)
    return `unknown template variable {{${path}}}: {{${root}}} has no fields: write {{${root}}}`;
  return `unknown template variable {{${path}}}: ${root} has ${known.map((f) => `{{${f}}}`).join(', ')}`;
}

/** Renders with plain string concatenation; values are inserted as text, never re-read as templates. */
export function renderTemplate(template: CompiledTemplate, ctx: TemplateContext): string {
  let out = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      out += part;
    } else {
      const value = part.get(ctx);
      if (value !== null && value !== undefined) out += String(value);
    }
    if (out.length > MAX_RENDERED_LENGTH) break;
  }
  return out.length > MAX_RENDERED_LENGTH ? `${out.slice(0, MAX_RENDERED_LENGTH - 1)}…` : out;
}
