import { createHash } from 'node:crypto';
import { z } from 'zod';
import { normalizeEngine, rawEngineName } from '../../events/channel-engine.js';
import type { Attachment, ConversationEvent } from '../../events/conversation-event.js';
import { canonicalJson } from './canonical-json.js';
import { eventKindOf, needsConversation } from './event-kind.js';
import { parseEventTime } from './event-time.js';

/**
 * Why an authenticated JSON body could not be turned into an event. The receiver keeps such bodies
 * in the quarantine (answering 200 so the platform stops retrying) and counts them.
 */
export type UnderstandFailure =
  | 'not_an_object'
  | 'missing_event_name'
  | 'missing_conversation_id'
  | 'invalid_field'
  | 'unreadable';

export interface NormalizeProblem {
  reason: UnderstandFailure;
  /** What is wrong, in words a person can act on (stored with the quarantined body). */
  message: string;
  /** What could be read before giving up, for logs and the quarantine listing. */
  eventName: string | null;
  conversationId: string | null;
}

export type NormalizeResult =
  | {
      ok: true;
      event: ConversationEvent;
      /**
       * Set when the body gives an event time that cannot be read, so the event time is the receive
       * time. The receiver takes the event anyway (a bad sender clock is no reason to lose a
       * message); explain and rule tests refuse it, since their verdicts depend on the event time.
       */
      unreadableTime?: UnreadableTime;
    }
  | { ok: false; problem: NormalizeProblem };

/** An event time given but not readable: the field, and its value as text (a number as written). */
export interface UnreadableTime {
  field: string;
  text: string;
}

export interface NormalizeContext {
  /** When the receiver accepted the body: the fallback event time and `receivedAt`. */
  receivedAt: Date;
}

// --- tolerant field readers (webhook-payloads.md §2: numbers where strings are documented) -----

/**
 * One field as text: a string, or a finite number or bigint written as text (objects, arrays and
 * booleans cannot stand for text). `undefined` when the value cannot be read, with an issue at the
 * field's path. One check per field: the union-and-transforms form this replaced allocated about
 * 17 KB per webhook in zod's parse payloads (the largest allocation site of a bridge under load).
 */
function readText(value: unknown, ctx: z.RefinementCtx): string | undefined {
  if (typeof value === 'string') return value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint')
    return String(value);
  ctx.addIssue({ code: 'custom', message: 'cannot be read as text or a number', input: value });
  return undefined;
}
const isAbsent = (value: unknown) => value === undefined || value === null || value === '';

// A standalone transform reads any value, an absent key's `undefined` included (the key is kept,
// as null, like the union form did); a bare z.unknown() would refuse the absent key.
/** Text, or a number written as text. */
const Text = z.transform((value: unknown, ctx) => readText(value, ctx) ?? z.NEVER);
/** Optional text: absent, null and '' all mean "not given". */
const OptText = z.transform((value: unknown, ctx): string | null =>
  isAbsent(value) ? null : (readText(value, ctx) ?? z.NEVER),
);
/** An identifier: like OptText, trimmed. */
const OptId = z.transform((value: unknown, ctx): string | null =>
  isAbsent(value) ? null : (readText(value, ctx)?.trim() ?? z.NEVER) || null,
);

/** The field readers, for the test that pins them to the union form they replaced. */
export const FIELD_READERS = { Text, OptText, OptId } as const;

/** `{id, name}` objects (`bisnis`, `user`, `ai`, `agent`); a bare string is taken as the name. */
const Named = z
  .union([z.object({ id: OptId, name: OptText }), Text.transform((name) => ({ id: null, name }))])
  .nullish();

const Channel = z
  .union([
    z.object({ id: OptId, name: OptText, engine: OptText, type: OptText }),
    Text.transform((engine) => ({ id: null, name: null, engine, type: null })),
  ])
  .nullish();

const AttachmentIn = z.object({
  url: Text,
  mime_type: OptText,
  mimetype: OptText,
  mimeType: OptText,
});
type AttachmentIn = z.infer<typeof AttachmentIn>;

const Content = z
  .union([
    z.object({
      type: OptText,
      text: OptText,
      caption: OptText,
      // One attachment object instead of a list is read as a list of one.
      attachments: z.union([z.array(AttachmentIn), AttachmentIn.transform((a) => [a])]).nullish(),
      url: OptText,
      mime_type: OptText,
      mimetype: OptText,
    }),
    Text.transform((plainText) => ({ plainText })),
  ])
  .nullish();

const Message = z
  .union([
    z.object({
      id: OptId,
      message_id: OptId,
      conversation_id: OptId,
      sender_name: OptText,
      text: OptText,
      caption: OptText,
      channel: Channel,
      bisnis: Named,
      business: Named,
      ai: Named,
      agent: Named,
      content: Content,
      need_human: z.unknown().optional(),
      timestamp: z.unknown().optional(),
      created_at: z.unknown().optional(),
      sent_at: z.unknown().optional(),
    }),
    // Earlier-form lists carry the message text as a plain string.
    Text.transform((plainText) => ({ plainText })),
  ])
  .nullish();

const Envelope = z.object({
  event: Text,
  timestamp: z.unknown().optional(),
  conversation_id: OptId,
  conversation_label: OptText,
  need_human: z.unknown().optional(),
  message_id: OptId,
  sender_name: OptText,
  message: Message,
  channel: Channel,
  bisnis: Named,
  business: Named,
  ai: Named,
  agent: Named,
});
type Envelope = z.infer<typeof Envelope>;
type MessageIn = Exclude<z.infer<typeof Message>, null | undefined>;
type MessageObject = Exclude<MessageIn, { plainText: string }>;
type ContentIn = Exclude<z.infer<typeof Content>, null | undefined>;
type ContentObject = Exclude<ContentIn, { plainText: string }>;

/** need_human forms seen: 0/1, "0"/"1", true/false, "true"/"false". Anything else reads as not set. */
const TRUE_FLAGS: ReadonlySet<unknown> = new Set([true, 1, '1', 'true', 'yes']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Some senders wrap the envelope in `data` (webhook-payloads.md §2), either whole (`{"data":
 * {event, ...}}`) or beside the event name (`{"event": ..., "data": {conversation_id, message}}`).
 * Unwrap only when the top level lacks the envelope's own fields, so a `data` key that means
 * something else is left alone. Object spread copies `__proto__` as a plain key (no prototype set).
 */
function unwrapData(body: Record<string, unknown>): Record<string, unknown> {
  const { data, ...rest } = body;
  if (!isRecord(data)) return body;
  if (rest.conversation_id !== undefined || rest.message !== undefined) return body;
  if (rest.event === undefined && data.event === undefined) return body;
  return { ...data, ...rest };
}

function problem(
  reason: UnderstandFailure,
  message: string,
  eventName: string | null = null,
  conversationId: string | null = null,
): NormalizeResult {
  return { ok: false, problem: { reason, message, eventName, conversationId } };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Turns one webhook body (already JSON-parsed) into the canonical ConversationEvent. Pure: no I/O,
 * no clock (the receive time comes in), and it never throws; a body it cannot understand gives a
 * typed problem instead. Tolerates every variant of webhook-payloads.md §2.
 */
export function normalizeEvent(body: unknown, context: NormalizeContext): NormalizeResult {
  try {
    return normalizeUnsafe(body, context);
  } catch (error) {
    // JSON bodies never reach this (the body hash is iterative, any depth); a caller passing values
    // JSON cannot hold (a bigint) gets a typed problem rather than an exception.
    const detail = error instanceof Error ? error.message : String(error);
    return problem('unreadable', `the body could not be read (${detail}); it is kept as it was received`);
  }
}

function normalizeUnsafe(body: unknown, context: NormalizeContext): NormalizeResult {
  if (!isRecord(body)) {
    return problem('not_an_object', 'the body is not a JSON object; the platform sends one object per event');
  }
  const envelope = unwrapData(body);
  const rawEvent = envelope.event;
  if (rawEvent === undefined || rawEvent === null || rawEvent === '') {
    return problem('missing_event_name', 'the body has no "event" field, so it is not a known webhook event');
  }
  const parsed = Envelope.safeParse(envelope);
  if (!parsed.success) {
    const eventName = typeof rawEvent === 'string' ? rawEvent : null;
    const conversationId = typeof envelope.conversation_id === 'string' ? envelope.conversation_id : null;
    return problem('invalid_field', describeIssues(parsed.error), eventName, conversationId);
  }
  const env = parsed.data;
  const name = env.event.trim();
  if (name === '') {
    return problem(
      'missing_event_name',
      'the body has an empty "event" field, so it is not a known webhook event',
    );
  }
  const kind = eventKindOf(name);
  const msg: MessageIn | null = env.message ?? null;
  const m: MessageObject | null = msg === null || 'plainText' in msg ? null : msg;
  const conversationId = env.conversation_id ?? m?.conversation_id ?? null;
  if (needsConversation(kind) && conversationId === null) {
    return problem(
      'missing_conversation_id',
      `a "${name}" event needs "conversation_id" (top level or in "message") and this body has none`,
      name,
    );
  }
  const messageId = m?.id ?? m?.message_id ?? env.message_id ?? null;
  const key = messageId === null ? `${name}|body:${sha256(canonicalJson(body))}` : `${name}|${messageId}`;

  const content: ContentIn | null = m?.content ?? null;
  const contentObject: ContentObject | null = content === null || 'plainText' in content ? null : content;
  const attachments = readAttachments(contentObject);
  const text =
    contentObject?.text ??
    (content !== null && 'plainText' in content ? content.plainText : null) ??
    m?.text ??
    (msg !== null && 'plainText' in msg ? msg.plainText : null) ??
    '';
  const channelIn = m?.channel ?? env.channel ?? null;
  const engineIn = channelIn?.engine ?? channelIn?.type ?? null;
  const time = readEventTime([
    ['timestamp', env.timestamp],
    ['message.timestamp', m?.timestamp],
    ['message.created_at', m?.created_at],
    ['message.sent_at', m?.sent_at],
  ]);
  const occurredAt = time.at ?? context.receivedAt;

  const event: ConversationEvent = {
    v: 1,
    kind,
    name,
    key,
    conversationId,
    messageId,
    text,
    caption: contentObject?.caption ?? m?.caption ?? '',
    contentType: readContentType(contentObject, attachments),
    attachments,
    channel: {
      id: channelIn?.id ?? null,
      name: channelIn?.name ?? null,
      engine: normalizeEngine(engineIn),
      rawEngine: rawEngineName(engineIn),
    },
    // The platform's account as the payload names it (`bisnis`, or `business` in some payloads).
    business: m?.bisnis ?? m?.business ?? env.bisnis ?? env.business ?? null,
    senderName: m?.sender_name ?? env.sender_name ?? null,
    conversationLabel: env.conversation_label,
    aiName: m?.ai?.name ?? env.ai?.name ?? null,
    agentName: m?.agent?.name ?? env.agent?.name ?? null,
    needHuman: TRUE_FLAGS.has(readFlag(env, m)),
    occurredAt: occurredAt.toISOString(),
    receivedAt: context.receivedAt.toISOString(),
  };
  return { ok: true, event, ...(time.unreadable ? { unreadableTime: time.unreadable } : {}) };
}

/** The first readable event time of `fields`, or the first field given that could not be read. */
function readEventTime(fields: readonly [string, unknown][]): { at?: Date; unreadable?: UnreadableTime } {
  let unreadable: UnreadableTime | undefined;
  for (const [field, value] of fields) {
    const at = parseEventTime(value);
    if (at !== undefined) return { at };
    if (unreadable === undefined && value !== undefined && value !== null && value !== '') {
      unreadable = {
        field,
        text: typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)),
      };
    }
  }
  return unreadable === undefined ? {} : { unreadable };
}

function readAttachments(content: ContentObject | null): Attachment[] {
  if (content === null) return [];
  const list: AttachmentIn[] = content.attachments ?? [];
  const out = list.map((a) => ({ url: a.url, mimeType: a.mime_type ?? a.mimetype ?? a.mimeType ?? null }));
  // A single media URL on the content itself (`{type: "image", url: ...}`) is one attachment.
  if (out.length === 0 && content.url !== null) {
    out.push({ url: content.url, mimeType: content.mime_type ?? content.mimetype ?? null });
  }
  return out;
}

function readContentType(content: ContentObject | null, attachments: Attachment[]): string {
  const given = content?.type?.trim().toLowerCase();
  if (given) return given;
  return attachments.length > 0 ? 'unknown' : 'text';
}

function readFlag(env: Envelope, m: { need_human?: unknown } | null): unknown {
  const value = env.need_human ?? m?.need_human;
  return typeof value === 'string' ? value.trim().toLowerCase() : value;
}

/** Names the first unusable fields by path, e.g. `"message.id" cannot be read as text or a number`. */
function describeIssues(error: z.ZodError): string {
  const paths = issuePaths(error.issues, []).slice(0, 3);
  const parts = paths.map(
    (path) => `"${path.join('.') || '(body)'}" has a value that cannot be read as text or a number`,
  );
  return `${parts.join('; ')}; fix the sender, or replay the entry after an upgrade that reads it`;
}

/** For a union (object or bare text), the object branch says which inner field was wrong. */
function issuePaths(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[]): PropertyKey[][] {
  const out: PropertyKey[][] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    const objectBranch = issue.code === 'invalid_union' ? issue.errors[0] : undefined;
    const inner = objectBranch?.filter((i) => i.path.length > 0) ?? [];
    if (inner.length > 0) out.push(...issuePaths(inner, path));
    else out.push(path);
  }
  return out;
}
