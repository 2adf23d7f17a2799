import { z } from 'zod';
import { INVALID_DATA_TEXT } from './api-envelopes.js';
import type { ApiForm } from './channels.js';
import { MEDIA_TYPES, type MediaType, type MessageContent } from './emulator-state.js';

/**
 * Request bodies of the platform's POST operations, validated per form. The first problem found is
 * the `error_msg` a caller sees; the texts are the spec's where it names them
 * (messaging-service-interface.md, "POST /v1/note" and "Errors") and webhook-payloads.md §3
 * otherwise. Fields are checked in document order, so `conversation_id` is reported first.
 */
export const CONVERSATION_ID_REQUIRED = 'conversation_id is required';
export const NOTE_REQUIRED = 'note is required';
export const CONVERSATION_NOT_FOUND = 'conversation not found';
/** Current-form send without text or media: not shown in the spec; chosen in the same style. */
export const TEXT_OR_MEDIA_REQUIRED = 'text or media is required';
export const MEDIA_TYPE_NOT_SUPPORTED = 'media type not supported';
export const MEDIA_MIME_NOT_SUPPORTED = 'media mime type not supported';
/** Not shown; chosen in the same style. */
export const MEDIA_URL_INVALID = 'media url is required and must be an https address';
/** Not shown; chosen in the same style. */
export const MEDIA_THUMBNAIL_INVALID = 'media thumbnail must be an http(s) URI';

/** Current form's media MIME types (spec, "Media object"); the earlier form takes any MIME string. */
export const CURRENT_MEDIA_MIME_TYPES = [
  'image/jpeg',
  'image/png',
  'video/mp4',
  'audio/mp3',
  'text/plain',
] as const;

const DEFAULT_MIME: Record<MediaType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mp3',
  document: 'application/pdf',
};

const nonBlank = (value: string) => value.trim() !== '';

/** `type/subtype` (RFC 6838 §4.2 restricted names), optionally followed by `;` parameters. */
const MIME_TYPE = /^[A-Za-z0-9][\w!#$&^.+-]*\/[A-Za-z0-9][\w!#$&^.+-]*(\s*;.*)?$/;

// Spec, Resources: `conversation_id` is a "Unique, opaque identifier", so it is used exactly as
// sent: not trimmed (the history path is not trimmed either, so a trimmed body id sent, noted and
// marked a different conversation than the client then read; conformance finding). Blank is missing.
const conversationId = z
  .string({ error: CONVERSATION_ID_REQUIRED })
  .refine(nonBlank, { error: CONVERSATION_ID_REQUIRED });

const optionalString = z.string({ error: INVALID_DATA_TEXT }).nullish();

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

// Spec, Media object: `url` is a "Publicly reachable file address (https)". The emulator took
// http too, which the client refuses before sending (conformance finding): https only.
const mediaUrl = z
  .string({ error: MEDIA_URL_INVALID })
  .trim()
  .refine(isHttpsUrl, { error: MEDIA_URL_INVALID });
// Spec, Media object: `thumbnail` is a "string (URI)". The emulator took any string, which the
// client refuses before sending (conformance finding): an absolute http(s) URI. Unlike `url`,
// the spec does not say https for it.
const mediaThumbnail = z
  .string({ error: MEDIA_THUMBNAIL_INVALID })
  .trim()
  .refine(isHttpUrl, { error: MEDIA_THUMBNAIL_INVALID });
const mediaType = z.enum(MEDIA_TYPES, { error: MEDIA_TYPE_NOT_SUPPORTED });

const currentMedia = z.object(
  {
    url: mediaUrl,
    type: mediaType,
    mime_type: z.enum(CURRENT_MEDIA_MIME_TYPES, { error: MEDIA_MIME_NOT_SUPPORTED }).nullish(),
    name: optionalString,
    caption: optionalString,
    thumbnail: mediaThumbnail.nullish(),
  },
  { error: INVALID_DATA_TEXT },
);

const earlierMedia = z.object(
  {
    url: mediaUrl,
    type: mediaType,
    // Earlier form: spelled `mimetype`, "a free MIME string": any type, but a MIME type all the
    // same, `type/subtype` with optional parameters. The emulator took any non-blank text (`gif`),
    // which the client refuses before sending (conformance finding).
    mimetype: z
      .string({ error: MEDIA_MIME_NOT_SUPPORTED })
      .trim()
      .refine((value) => MIME_TYPE.test(value), { error: MEDIA_MIME_NOT_SUPPORTED })
      .nullish(),
    name: optionalString,
    caption: optionalString,
    thumbnail: mediaThumbnail.nullish(),
  },
  { error: INVALID_DATA_TEXT },
);

const currentSend = z
  .object(
    {
      conversation_id: conversationId,
      text: optionalString,
      media: currentMedia.nullish(),
      // Spec, Message: `reply_to_message_id` is "Present only when the message is a reply". A
      // blank one was stored and came back in the history as a reply to nothing; the client
      // refuses it before sending (conformance finding). Refused as a bad parameter.
      reply_to_message_id: z
        .string({ error: INVALID_DATA_TEXT })
        .refine(nonBlank, { error: INVALID_DATA_TEXT })
        .nullish(),
    },
    { error: INVALID_DATA_TEXT },
  )
  .superRefine((body, ctx) => {
    if (!body.media && (body.text ?? '').trim() === '') {
      ctx.addIssue({ code: 'custom', message: TEXT_OR_MEDIA_REQUIRED, path: ['text'] });
    }
  });

const earlierSend = z.object(
  {
    conversation_id: conversationId,
    // Earlier form: `text` is required (spec, POST /v1/message); bad parameters get the invalid-data text.
    text: z.string({ error: INVALID_DATA_TEXT }).refine(nonBlank, { error: INVALID_DATA_TEXT }),
    media: earlierMedia.nullish(),
  },
  { error: INVALID_DATA_TEXT },
);

const noteBody = z.object(
  {
    conversation_id: conversationId,
    note: z.string({ error: NOTE_REQUIRED }).refine(nonBlank, { error: NOTE_REQUIRED }),
  },
  { error: INVALID_DATA_TEXT },
);

const needHumanBody = z.object({ conversation_id: conversationId }, { error: INVALID_DATA_TEXT });

export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errorMsg: string };

function firstIssue<T>(result: z.ZodSafeParseResult<T>): Parsed<T> {
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, errorMsg: result.error.issues[0]?.message ?? INVALID_DATA_TEXT };
}

export interface SendRequest {
  readonly conversationId: string;
  readonly content: MessageContent;
  readonly replyToMessageId: string | null;
}

export function parseSendRequest(form: ApiForm, body: unknown): Parsed<SendRequest> {
  if (form === 'current') {
    const parsed = firstIssue(currentSend.safeParse(body));
    if (!parsed.ok) return parsed;
    const { media, text } = parsed.value;
    // Current form: when media is present, text is ignored.
    const content: MessageContent = media
      ? {
          kind: 'media',
          type: media.type,
          url: media.url,
          mimeType: media.mime_type ?? DEFAULT_MIME[media.type],
          caption: media.caption ?? '',
        }
      : { kind: 'text', text: text ?? '' };
    return {
      ok: true,
      value: {
        conversationId: parsed.value.conversation_id,
        content,
        replyToMessageId: parsed.value.reply_to_message_id ?? null,
      },
    };
  }
  const parsed = firstIssue(earlierSend.safeParse(body));
  if (!parsed.ok) return parsed;
  const { media, text } = parsed.value;
  // Earlier form: text is required even with media; it becomes the caption when the media has none.
  const content: MessageContent = media
    ? {
        kind: 'media',
        type: media.type,
        url: media.url,
        mimeType: media.mimetype ?? DEFAULT_MIME[media.type],
        caption: media.caption ?? text,
      }
    : { kind: 'text', text };
  return {
    ok: true,
    value: { conversationId: parsed.value.conversation_id, content, replyToMessageId: null },
  };
}

export function parseNoteRequest(body: unknown): Parsed<{ conversationId: string; note: string }> {
  const parsed = firstIssue(noteBody.safeParse(body));
  if (!parsed.ok) return parsed;
  return { ok: true, value: { conversationId: parsed.value.conversation_id, note: parsed.value.note } };
}

export function parseNeedHumanRequest(body: unknown): Parsed<{ conversationId: string }> {
  const parsed = firstIssue(needHumanBody.safeParse(body));
  if (!parsed.ok) return parsed;
  return { ok: true, value: { conversationId: parsed.value.conversation_id } };
}

/** `limit` / `last_id` query values: absent or empty is 0; anything but a non-negative integer is invalid. */
export function parseCursorParam(value: unknown): number | undefined {
  if (value === undefined || value === '') return 0;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
