import { z } from 'zod';
import { authHeaders } from './auth-headers.js';
import type { ResolvedClientOptions } from './client-options.js';
import { OPERATION_SAFETY, type OperationSafety, type PlatformOperation } from './operations.js';
import {
  type HistoryPage,
  type ParseResult,
  parseAck,
  parseHistory,
  parseNeedHumanTotal,
  parseVersion,
  type ResponseBody,
} from './parse-responses.js';
import { PlatformError } from './platform-error.js';

/*
 * Pure request building, per operation and form: path, query, body, credential headers, and the
 * parser for the success answer. Inputs are validated here, before anything is sent; a bad input
 * is a PlatformError VALIDATION with attempts 0.
 */

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;
/** The only MIME types the current form lists for media (spec: "Media object"). */
export const CURRENT_FORM_MIME_TYPES = [
  'image/jpeg',
  'image/png',
  'video/mp4',
  'audio/mp3',
  'text/plain',
] as const;

export interface MediaInput {
  /** Publicly reachable https address; the platform references it, it does not upload files. */
  url: string;
  type: (typeof MEDIA_TYPES)[number];
  /** Current form: one of CURRENT_FORM_MIME_TYPES. Earlier form: any MIME string (sent as `mimetype`). */
  mimeType?: string | undefined;
  name?: string | undefined;
  caption?: string | undefined;
  thumbnail?: string | undefined;
}

export interface SendMessageInput {
  conversationId: string;
  /** Current form: text or media is required, and text is not sent when media is present. Earlier form: required. */
  text?: string | undefined;
  media?: MediaInput | undefined;
  /** Current form only (the earlier form has no such field; it is not sent there). */
  replyToMessageId?: string | undefined;
}

export interface GetMessagesInput {
  /** At most this many messages; 0 or absent means all. */
  limit?: number | undefined;
  /** Only messages with an `id` greater than this. */
  lastId?: number | undefined;
}

export interface PlatformRequest<T> {
  operation: PlatformOperation;
  safety: OperationSafety;
  method: 'GET' | 'POST';
  /** Path relative to baseUrl, query string excluded (safe to log). */
  path: string;
  searchParams?: Record<string, string>;
  json?: Record<string, unknown>;
  headers: Record<string, string>;
  parse: (body: ResponseBody) => ParseResult<T>;
}

const HTTPS_PROBLEM = 'must be an https URL that the platform can reach publicly';
const httpsUrl = z.string().refine(
  (value) => {
    try {
      return new URL(value).protocol === 'https:';
    } catch {
      return false;
    }
  },
  { error: HTTPS_PROBLEM },
);

// Spec, Media object: `thumbnail` is a "string (URI)"; only `url` is said to be https. The client
// used to refuse an http thumbnail the interface allows (conformance finding).
const THUMBNAIL_PROBLEM = 'must be an http(s) URL';
const httpOrHttpsUrl = z.string().refine(
  (value) => {
    try {
      const { protocol } = new URL(value);
      return protocol === 'https:' || protocol === 'http:';
    } catch {
      return false;
    }
  },
  { error: THUMBNAIL_PROBLEM },
);

/** A message for "not an object" only; other issues of the object (unknown keys) keep zod's own. */
const notAnObject = (message: string) => (issue: { code: string }) =>
  issue.code === 'invalid_type' ? message : undefined;

const conversationIdSchema = z
  .string({ error: 'conversationId must be a string' })
  .refine((value) => value.trim() !== '', { error: 'conversationId is required' });
const nonBlank = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .refine((value) => value.trim() !== '', { error: `${what} must not be empty` });

/** Built once: a zod schema compiles its parser on first use (see SEND_MESSAGE_SCHEMAS). */
const NOTE_SCHEMA = nonBlank('note');

function mediaSchema(form: 'current' | 'earlier') {
  const mimeType =
    form === 'current'
      ? z
          .string({ error: 'media.mimeType must be a string' })
          .transform((value) => value.trim().toLowerCase())
          .refine((value) => (CURRENT_FORM_MIME_TYPES as readonly string[]).includes(value), {
            error: `media.mimeType must be one of ${CURRENT_FORM_MIME_TYPES.join(', ')} in the current form`,
          })
      : z
          .string({ error: 'media.mimeType must be a string' })
          .refine((value) => /^[^\s/]+\/[^\s]+$/.test(value.trim()), {
            error: 'media.mimeType must look like type/subtype, e.g. image/gif',
          })
          .transform((value) => value.trim());
  return z
    .object(
      {
        url: httpsUrl,
        type: z.enum(MEDIA_TYPES, { error: `media.type must be one of ${MEDIA_TYPES.join(', ')}` }),
        mimeType: mimeType.optional(),
        name: z.string().optional(),
        caption: z.string().optional(),
        thumbnail: httpOrHttpsUrl.optional(),
      },
      { error: notAnObject('media must be an object') },
    )
    .strict();
}

function sendMessageSchema(form: 'current' | 'earlier') {
  return z
    .object(
      {
        conversationId: conversationIdSchema,
        text: z.string({ error: 'text must be a string' }).optional(),
        media: mediaSchema(form).optional(),
        replyToMessageId: nonBlank('replyToMessageId').optional(),
      },
      { error: notAnObject('the message must be an object') },
    )
    .strict()
    .superRefine((input, ctx) => {
      const hasText = input.text !== undefined && input.text.trim() !== '';
      if (form === 'earlier' && !hasText) {
        ctx.addIssue({ code: 'custom', path: ['text'], message: 'text is required in the earlier form' });
      }
      if (form === 'current' && !hasText && input.media === undefined) {
        ctx.addIssue({ code: 'custom', path: ['text'], message: 'text or media is required' });
      }
    });
}

/** Built once per form: a zod schema compiles its parser on first use, so building one per call cost more than the call. */
const SEND_MESSAGE_SCHEMAS = {
  current: sendMessageSchema('current'),
  earlier: sendMessageSchema('earlier'),
} as const;

/** Our own messages name their field; zod's defaults ("Invalid input: ...") get the path in front. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.join('.');
  const last = String(issue.path.at(-1) ?? '');
  if (where === '' || issue.message.startsWith(where) || issue.message.startsWith(last)) return issue.message;
  return `${where}: ${issue.message}`;
}

function invalid(
  operation: PlatformOperation,
  method: string,
  path: string,
  error: z.ZodError,
): PlatformError {
  const detail = error.issues.map(describeIssue).join('; ');
  return new PlatformError({
    code: 'VALIDATION',
    operation,
    method,
    path,
    statusCode: null,
    rc: null,
    platformMessage: null,
    retryAfterMs: null,
    attempts: 0,
    detail,
    cause: error,
  });
}

function validate<T>(
  schema: z.ZodType<T>,
  input: unknown,
  where: { operation: PlatformOperation; method: string; path: string },
): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalid(where.operation, where.method, where.path, parsed.error);
  return parsed.data;
}

function base<T>(
  options: ResolvedClientOptions,
  operation: PlatformOperation,
  method: 'GET' | 'POST',
  path: string,
  parse: (body: ResponseBody) => ParseResult<T>,
  earlierFormHistory = false,
): PlatformRequest<T> {
  return {
    operation,
    safety: OPERATION_SAFETY[operation],
    method,
    path,
    headers: authHeaders(options.auth, { earlierFormHistory }),
    parse,
  };
}

const historyPath = (conversationId: string) => `/v1/message/${encodeURIComponent(conversationId)}`;

/** POST /v1/message. Returns `{conversationId, messageId?}`. */
export function buildSendMessage(
  options: ResolvedClientOptions,
  input: SendMessageInput,
): PlatformRequest<{ conversationId: string; messageId?: string }> {
  const where = { operation: 'sendMessage', method: 'POST', path: '/v1/message' } as const;
  const valid = validate(SEND_MESSAGE_SCHEMAS[options.form], input, where);
  const json: Record<string, unknown> = { conversation_id: valid.conversationId };
  if (valid.media !== undefined) {
    const { mimeType, ...rest } = valid.media;
    const media: Record<string, unknown> = { ...rest };
    // The only spelling difference between the forms in the media object (spec: "Media object").
    if (mimeType !== undefined) media[options.form === 'current' ? 'mime_type' : 'mimetype'] = mimeType;
    json.media = media;
  }
  // Current form: "When media is present, text is ignored", so it is not sent at all.
  if (valid.text !== undefined && !(options.form === 'current' && valid.media !== undefined))
    json.text = valid.text;
  if (valid.replyToMessageId !== undefined && options.form === 'current') {
    json.reply_to_message_id = valid.replyToMessageId;
  }
  return {
    ...base(options, 'sendMessage', 'POST', '/v1/message', (body) => {
      const ack = parseAck(body);
      if (!ack.ok) return ack;
      const value: { conversationId: string; messageId?: string } = {
        conversationId: ack.value.conversationId ?? valid.conversationId,
      };
      if (ack.value.messageId !== undefined) value.messageId = ack.value.messageId;
      return { ok: true, value };
    }),
    json,
  };
}

const getMessagesSchema = z
  .object(
    {
      limit: z
        .int({ error: 'limit must be a non-negative integer' })
        .min(0, { error: 'limit must be a non-negative integer' })
        .optional(),
      lastId: z
        .int({ error: 'lastId must be a non-negative integer' })
        .min(0, { error: 'lastId must be a non-negative integer' })
        .optional(),
    },
    { error: notAnObject('the options must be an object') },
  )
  .strict();

/**
 * GET /v1/message/{conversation_id}. Current form: `limit` and `last_id` go to the server. Earlier
 * form: there is no pagination (every message comes back), so the client applies them itself
 * (see sliceHistory) and sends the `merchant_id`/`secret_key` headers that call is said to take.
 */
export function buildGetMessages(
  options: ResolvedClientOptions,
  conversationId: string,
  input: GetMessagesInput = {},
): PlatformRequest<HistoryPage> & { window: GetMessagesInput } {
  const method = 'GET';
  const path =
    typeof conversationId === 'string' ? historyPath(conversationId) : '/v1/message/{conversation_id}';
  const id = validate(conversationIdSchema, conversationId, { operation: 'getMessages', method, path });
  const valid = validate(getMessagesSchema, input, { operation: 'getMessages', method, path });
  const request = {
    ...base(
      options,
      'getMessages',
      method,
      path,
      (body) => parseHistory(body, options.form, id),
      options.form === 'earlier',
    ),
    window: valid,
  };
  if (options.form === 'current') {
    const searchParams: Record<string, string> = {};
    if (valid.limit !== undefined) searchParams.limit = String(valid.limit);
    if (valid.lastId !== undefined) searchParams.last_id = String(valid.lastId);
    return { ...request, searchParams };
  }
  return request;
}

/**
 * Applies `lastId` and `limit` to a page on the client: drops what is not beyond the cursor (the
 * earlier form ignores it; a current-form server that ignores it too must not cause duplicates)
 * and keeps the oldest `limit` so that the cursor can walk on from there.
 */
export function sliceHistory(page: HistoryPage, window: GetMessagesInput): HistoryPage {
  const after = window.lastId ?? 0;
  let messages = page.messages.filter((message) => message.id > after);
  if (window.limit !== undefined && window.limit > 0) messages = messages.slice(0, window.limit);
  // The next cursor never goes back: an empty page (platform last_id 0) keeps the one given.
  const lastId = messages.reduce((max, message) => Math.max(max, message.id), after);
  return { messages, lastId };
}

/** POST /v1/note. Returns `{messageId?}`. */
export function buildAddNote(
  options: ResolvedClientOptions,
  conversationId: string,
  note: string,
): PlatformRequest<{ messageId?: string }> {
  const where = { operation: 'addNote', method: 'POST', path: '/v1/note' } as const;
  const id = validate(conversationIdSchema, conversationId, where);
  const text = validate(NOTE_SCHEMA, note, where);
  return {
    ...base(options, 'addNote', 'POST', '/v1/note', (body) => {
      const ack = parseAck(body);
      if (!ack.ok) return ack;
      return { ok: true, value: ack.value.messageId === undefined ? {} : { messageId: ack.value.messageId } };
    }),
    json: { conversation_id: id, note: text },
  };
}

/** POST /v1/conversation/need-human. */
export function buildMarkNeedHuman(
  options: ResolvedClientOptions,
  conversationId: string,
): PlatformRequest<void> {
  const where = { operation: 'markNeedHuman', method: 'POST', path: '/v1/conversation/need-human' } as const;
  const id = validate(conversationIdSchema, conversationId, where);
  return {
    ...base(options, 'markNeedHuman', 'POST', where.path, (body) => {
      const ack = parseAck(body);
      return ack.ok ? { ok: true, value: undefined } : ack;
    }),
    json: { conversation_id: id },
  };
}

/** GET /v1/conversation/need-human/total. */
export function buildGetNeedHumanTotal(options: ResolvedClientOptions): PlatformRequest<number> {
  return base(options, 'getNeedHumanTotal', 'GET', '/v1/conversation/need-human/total', parseNeedHumanTotal);
}

/** GET /version. */
export function buildGetVersion(options: ResolvedClientOptions): PlatformRequest<string> {
  return base(options, 'getVersion', 'GET', '/version', parseVersion);
}
