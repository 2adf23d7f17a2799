import { maskPersonalData } from '../base/personal-data.js';
import type { ConversationEvent } from '../events/conversation-event.js';

/** What record.redact asks for (config-schema.ts resolves `personal` into the four kinds). */
export interface RedactOptions {
  texts: boolean;
  phones: boolean;
  emails: boolean;
  cards: boolean;
  nationalIds: boolean;
}

/** The names a recorded line lists in `redacted`, in this order. */
export const REDACTION_KINDS = ['texts', 'phones', 'emails', 'cards', 'national_ids'] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];

export const REDACTED_TEXT = '[redacted]';

const masksAnything = (o: RedactOptions) => o.phones || o.emails || o.cards || o.nationalIds;

/**
 * The event as it is recorded (record.redact): texts and captions replaced, and/or e-mail
 * addresses, card numbers, NIKs and phone numbers masked in texts, captions and names
 * (base/personal-data.ts says how each is recognised). Pure; returns the same object when nothing
 * is to be redacted.
 */
export function redactEvent(event: ConversationEvent, options: RedactOptions): ConversationEvent {
  const masking = masksAnything(options);
  if (!options.texts && !masking) return event;
  const mask = (value: string) => (masking ? maskPersonalData(value, options) : value);
  const text = (value: string) => (options.texts && value !== '' ? REDACTED_TEXT : mask(value));
  const name = (value: string | null) => (value === null ? null : mask(value));
  return {
    ...event,
    text: text(event.text),
    caption: text(event.caption),
    senderName: name(event.senderName),
    conversationLabel: name(event.conversationLabel),
  };
}

/** The redactions a recorded line says it had (`redacted`), as config names. */
export function redactedFields(options: RedactOptions): RedactionKind[] {
  const on: Record<RedactionKind, boolean> = {
    texts: options.texts,
    phones: options.phones,
    emails: options.emails,
    cards: options.cards,
    national_ids: options.nationalIds,
  };
  return REDACTION_KINDS.filter((kind) => on[kind]);
}
