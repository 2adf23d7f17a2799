import { z } from 'zod';
import { countSchema, currentMessageSchema, earlierMessageSchema } from './message-schemas.js';
import type { PlatformMessage } from './platform-message.js';

/*
 * Success answers of every operation, per form, as pure functions over the decoded body. Error
 * envelopes never get here (classify-response.ts takes them first); whatever does not fit
 * becomes a `problem` that the client reports as a CONTRACT error.
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface ResponseBody {
  /** The raw text of the body. */
  text: string;
  /** The body decoded as JSON; undefined when it is not JSON. */
  json: unknown;
}

export interface HistoryPage {
  messages: PlatformMessage[];
  /** The highest `id` in this page; 0 for an empty page (the platform's own convention). */
  lastId: number;
}

const flexibleBoolean = z.union([z.boolean(), z.literal('true'), z.literal(1), z.literal('1')]);
const optionalId = z.union([z.string(), z.number()]).transform(String).optional().catch(undefined);

/**
 * Acknowledgements of the POST calls. Both forms are accepted on either setting, because the
 * public docs disagree about them (webhook-payloads.md §3): current `{success:true, ...}`,
 * earlier `{status:1, message}`, newer docs `{status:1, message, data:{...}}`.
 */
const AckSchema = z.object({
  success: flexibleBoolean.optional().catch(undefined),
  status: countSchema.optional().catch(undefined),
  conversation_id: optionalId,
  message_id: optionalId,
  data: z
    .object({ conversation_id: optionalId, message_id: optionalId })
    .nullable()
    .optional()
    .catch(undefined),
});

interface Ack {
  conversationId?: string;
  messageId?: string;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}

function needJson(body: ResponseBody): ParseResult<unknown> {
  if (body.json === undefined) return { ok: false, problem: `the body is not JSON (${preview(body)})` };
  return { ok: true, value: body.json };
}

const kindOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'list'
      : typeof value === 'object'
        ? 'object'
        : typeof value;

/**
 * What a body looks like, for messages, without quoting it: an answer may hold what
 * customers wrote (a history page) or echo what we sent, and these messages reach logs, traces
 * and dead letters. A JSON object is described by its top-level keys and the kinds of their values
 * (`a JSON object {ok: number}`), other bodies by their kind and size (`an HTML page of 2048 characters`).
 */
export function preview(body: ResponseBody): string {
  const trimmed = body.text.trim();
  if (trimmed === '') return 'an empty body';
  const { json } = body;
  if (json !== undefined && json !== null && typeof json === 'object' && !Array.isArray(json)) {
    const entries = Object.entries(json);
    const shown = entries
      .slice(0, 8)
      .map(([key, value]) => `${key.length > 40 ? `${key.slice(0, 37)}...` : key}: ${kindOf(value)}`);
    return `a JSON object {${shown.join(', ')}${entries.length > 8 ? `, ... (${entries.length} keys)` : ''}}`;
  }
  if (Array.isArray(json)) return `a JSON list of ${json.length} item(s)`;
  if (json !== undefined) return `a JSON ${kindOf(json)}`;
  const html = /^<(!doctype|html|head|body|\?xml)/i.test(trimmed);
  return `${html ? 'an HTML page' : 'a text'} of ${trimmed.length} characters`;
}

export function parseAck(body: ResponseBody): ParseResult<Ack> {
  const json = needJson(body);
  if (!json.ok) return json;
  const parsed = AckSchema.safeParse(json.value);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error) };
  const ack = parsed.data;
  if (ack.success === undefined && ack.status !== 1) {
    return {
      ok: false,
      problem: `no success marker (expected "success": true or "status": 1) in ${preview(body)}`,
    };
  }
  const value: Ack = {};
  const conversationId = ack.conversation_id ?? ack.data?.conversation_id;
  const messageId = ack.message_id ?? ack.data?.message_id;
  if (conversationId !== undefined) value.conversationId = conversationId;
  if (messageId !== undefined) value.messageId = messageId;
  return { ok: true, value };
}

/**
 * A history page. Current form: `data.list` (array or null) and `data.last_id`. Earlier form:
 * `data` is a plain array of every message.
 */
export function parseHistory(
  body: ResponseBody,
  form: 'current' | 'earlier',
  conversationId: string,
): ParseResult<HistoryPage> {
  const json = needJson(body);
  if (!json.ok) return json;
  const schema =
    form === 'current'
      ? z.object({
          data: z.object({
            list: z.array(currentMessageSchema(conversationId)).nullable(),
            last_id: countSchema.optional(),
          }),
        })
      : z.object({ data: z.array(earlierMessageSchema(conversationId)).nullable() });
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    return {
      ok: false,
      problem: `history answer does not fit the ${form} form: ${describeIssues(parsed.error)}`,
    };
  }
  const data = parsed.data.data;
  const messages = (Array.isArray(data) ? data : data?.list) ?? [];
  const lastId = messages.reduce((max, message) => Math.max(max, message.id), 0);
  return { ok: true, value: { messages, lastId } };
}

const TotalSchema = z.union([
  z.object({ data: z.object({ total: countSchema }) }),
  z.object({ total: countSchema }),
]);

/** Need-human total: `{status:1, data:{total}}`, or the older `{success:true, total}`. */
export function parseNeedHumanTotal(body: ResponseBody): ParseResult<number> {
  const json = needJson(body);
  if (!json.ok) return json;
  const parsed = TotalSchema.safeParse(json.value);
  if (!parsed.success) return { ok: false, problem: `no non-negative integer total in ${preview(body)}` };
  return { ok: true, value: 'data' in parsed.data ? parsed.data.data.total : parsed.data.total };
}

const versionValue = z.union([z.string().min(1), z.number()]).transform(String);
const VersionSchema = z.union([
  versionValue,
  z.object({ version: versionValue }),
  z.object({ data: z.object({ version: versionValue }) }),
]);
const PLAIN_VERSION = /^[\w.+\- ]{1,64}$/;

/**
 * GET /version: the body is not documented (webhook-payloads.md §3), so `{"version":"1.3"}`,
 * `{"data":{"version":"v1.3"}}` and a plain-text `1.3` are all accepted. A leading `v` is
 * dropped so that every shape reads the same (`1.3`); text without a digit is not a version.
 */
export function parseVersion(body: ResponseBody): ParseResult<string> {
  let raw: string | undefined;
  if (body.json !== undefined) {
    const parsed = VersionSchema.safeParse(body.json);
    if (parsed.success) {
      const value = parsed.data;
      raw = typeof value === 'string' ? value : 'version' in value ? value.version : value.data.version;
    }
  } else if (PLAIN_VERSION.test(body.text.trim())) {
    raw = body.text.trim();
  }
  const version = raw?.trim().replace(/^v(?=\d)/i, '');
  // A version has a digit; this keeps an "OK" or a status word from passing as one.
  if (!version || !/\d/.test(version)) return { ok: false, problem: `no version in ${preview(body)}` };
  return { ok: true, value: version };
}
