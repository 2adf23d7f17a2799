import { z } from 'zod';

/**
 * The one canonical event every part of the bridge speaks after the receiver. The receiver turns
 * each webhook variant (webhook-payloads.md §2, both interface forms) into this; the rules and the
 * worker never see raw payloads. It travels through Redis as JSON, so instants are ISO-8601 UTC
 * strings and it is validated again when taken off the queue.
 */
export const EVENT_KINDS = [
  'message_in', // a customer message (channel.message_in, message.incoming, user.message_in)
  'ai_reply', // the AI produced a reply (ai.message_generated)
  'agent_reply', // a human agent replied (agent.message_out)
  'message_sent', // earlier form: a message was sent (message.sent)
  'assigned', // earlier form: conversation assigned to a human (conversation.assigned)
  'test', // the dashboard's test ping
  'unknown', // an event name we do not know; acknowledged, not acted on
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Engines after normalisation (`wa`, `waba` -> whatsapp, `ig` -> instagram, ...); others pass through lower-cased. */
export const KNOWN_ENGINES = [
  'whatsapp',
  'telegram',
  'instagram',
  'facebook',
  'intercom',
  'slack',
  'socialchat',
  'webchat',
] as const;

const nullableString = z.string().nullable();

export const AttachmentSchema = z.object({
  url: z.string(),
  mimeType: nullableString,
});
export type Attachment = z.infer<typeof AttachmentSchema>;

export const ConversationEventSchema = z.object({
  /** Schema version of this object, for rolling upgrades of queued jobs. */
  v: z.literal(1),
  kind: z.enum(EVENT_KINDS),
  /** The event name exactly as delivered, e.g. `channel.message_in`. */
  name: z.string(),
  /**
   * Idempotency key: `<event name>|<message id>`, or `<event name>|body:<sha256 of the body>` when
   * the payload has no message id. Redeliveries of one event share it (webhook-payloads.md §1).
   */
  key: z.string().min(1),
  conversationId: nullableString,
  messageId: nullableString,
  /** Message text; '' when there is none. */
  text: z.string(),
  /** Media caption; '' when there is none. */
  caption: z.string(),
  /** `text`, `image`, `video`, `audio`, `document`, or whatever else the platform sent (lower-cased). */
  contentType: z.string(),
  attachments: z.array(AttachmentSchema),
  channel: z.object({
    id: nullableString,
    name: nullableString,
    /** Normalised engine (one of KNOWN_ENGINES, or the raw value lower-cased, or 'unknown'). */
    engine: z.string(),
    /**
     * The engine exactly as the platform named it, trimmed and lower-cased (`wa`, `waba`,
     * `whatsapp`...); null when none was given. Normalisation folds `wa` and `waba` into
     * `whatsapp`, but only the raw name tells a QR-linked number from the business API, which the
     * reply window needs. Optional so that jobs queued by an older bridge still parse.
     */
    rawEngine: nullableString.optional(),
  }),
  business: z.object({ id: nullableString, name: nullableString }).nullable(),
  /** `message.sender_name`. */
  senderName: nullableString,
  /** `conversation_label`: usually the customer's name. */
  conversationLabel: nullableString,
  aiName: nullableString,
  agentName: nullableString,
  needHuman: z.boolean(),
  /** When the event happened, per the payload (falls back to receivedAt). ISO-8601 UTC. */
  occurredAt: z.iso.datetime(),
  /** When the receiver accepted it. ISO-8601 UTC. */
  receivedAt: z.iso.datetime(),
});
export type ConversationEvent = z.infer<typeof ConversationEventSchema>;

/** The customer's display name as templates see it (`{{customer.name}}`). */
export function customerName(event: ConversationEvent): string {
  if (event.kind === 'message_in') return event.senderName ?? event.conversationLabel ?? '';
  return event.conversationLabel ?? '';
}
