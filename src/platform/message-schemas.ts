import { z } from 'zod';
import { parseWib } from '../base/wib-time.js';
import { DELIVERY_STATUSES, type DeliveryStatus, type PlatformMessage } from './platform-message.js';

/*
 * zod schemas for the history list items of each form, turning them into PlatformMessage.
 * Tolerant where platforms of this kind are sloppy (numbers as strings, nulls for empty strings,
 * unknown extra keys are dropped), strict where the client depends on a field (`id` is the cursor,
 * `sent_at` an instant): a message without them does not fit and fails the page as CONTRACT.
 */

/** A non-negative safe integer, also when sent as a string of digits. */
export const countSchema = z.preprocess(
  (value) => (typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
  z.int().min(0),
);

/** An identifier documented as a string; numbers are accepted and written as strings. */
const idSchema = z.union([z.string(), z.number()]).transform(String);

/** An optional string-ish field; null, missing or '' become null. */
const optionalString = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((value) => (value === null || value === undefined || value === '' ? null : String(value)));

/** 0/1 flags, also as strings or booleans; anything else is "not known" (null). */
const flagSchema = z.unknown().transform((value): boolean | null => {
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false') return false;
  return null;
});

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * `sent_at` is WIB `YYYY-MM-DD HH:MM:SS` per the spec. Unix seconds/milliseconds and ISO strings
 * with a zone are accepted too (webhook-payloads.md §2 lists them as variations seen).
 */
export function parseSentAt(value: string | number): Date | undefined {
  if (typeof value === 'number' || /^\d+$/.test(value.trim())) {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n <= 0) return undefined;
    return new Date(n >= 1e12 ? n : n * 1000);
  }
  const wib = parseWib(value);
  if (wib) return wib;
  if (ISO_WITH_ZONE.test(value.trim())) {
    const date = new Date(value.trim());
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
}

const sentAtSchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const date = parseSentAt(value);
  if (date) return date;
  ctx.addIssue({
    code: 'custom',
    message: `sent_at ${JSON.stringify(value)} is not a WIB YYYY-MM-DD HH:MM:SS time`,
  });
  return z.NEVER;
});

const deliveryStatusSchema = z.unknown().transform((value): DeliveryStatus | null => {
  if (typeof value !== 'string') return null;
  const lower = value.trim().toLowerCase();
  return (DELIVERY_STATUSES as readonly string[]).includes(lower) ? (lower as DeliveryStatus) : null;
});

/** Earlier-form `metadata`: a JSON document in a string. Never throws: unparseable is null. */
export function parseMetadata(value: unknown): Record<string, unknown> | null {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return null;
    try {
      parsed = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    return parsed as Record<string, unknown>;
  }
  return null;
}

const baseFields = {
  id: countSchema,
  message_id: idSchema,
  conversation_id: optionalString,
  sender: z.string().transform((value) => value.trim().toLowerCase()),
  sender_name: optionalString,
  message: optionalString,
  caption: optionalString,
  message_type: optionalString,
  mime_type: optionalString,
  sent_at: sentAtSchema,
};

type BaseRaw = z.output<z.ZodObject<typeof baseFields>>;

function toMessage(
  raw: BaseRaw,
  conversationId: string,
  extra: Pick<PlatformMessage, 'deliveryStatus' | 'replyToMessageId' | 'isNote' | 'lockByHuman' | 'metadata'>,
): PlatformMessage {
  return {
    id: raw.id,
    messageId: raw.message_id,
    conversationId: raw.conversation_id ?? conversationId,
    sender: raw.sender,
    senderName: raw.sender_name,
    text: raw.message ?? '',
    caption: raw.caption ?? '',
    messageType: raw.message_type,
    mimeType: raw.mime_type,
    sentAt: raw.sent_at,
    ...extra,
  };
}

/** A current-form list item (spec: "Message, current form"). Notes carry no marker: isNote null. */
export function currentMessageSchema(conversationId: string) {
  return z
    .object({
      ...baseFields,
      delivery_status: deliveryStatusSchema,
      reply_to_message_id: optionalString,
    })
    .transform((raw) =>
      toMessage(raw, conversationId, {
        deliveryStatus: raw.delivery_status,
        replyToMessageId: raw.reply_to_message_id,
        isNote: null,
        lockByHuman: null,
        metadata: null,
      }),
    );
}

/** An earlier-form list item (spec: "Message, earlier form"): is_note, lock_by_human, metadata. */
export function earlierMessageSchema(conversationId: string) {
  return z
    .object({
      ...baseFields,
      metadata: z.unknown().transform(parseMetadata),
      lock_by_human: flagSchema,
      is_note: flagSchema,
    })
    .transform((raw) =>
      toMessage(raw, conversationId, {
        deliveryStatus: null,
        replyToMessageId: null,
        isNote: raw.is_note,
        lockByHuman: raw.lock_by_human,
        metadata: raw.metadata,
      }),
    );
}
