import type { ConversationEvent } from '../events/conversation-event.js';

export interface RedactOptions {
  texts: boolean;
  phones: boolean;
}

export const REDACTED_TEXT = '[redacted]';

/** Seven or more digits, optionally with a leading + and single spaces, dots or dashes between. */
const PHONE = /\+?\d(?:[ .-]?\d){6,}/g;

function maskPhones(text: string): string {
  return text.replace(PHONE, (found) => found.replace(/\d/g, '#'));
}

/**
 * The event as it is recorded: texts and captions replaced, or phone numbers masked in texts and
 * names (record.redact). Pure; returns the same object when nothing is to be redacted.
 */
export function redactEvent(event: ConversationEvent, options: RedactOptions): ConversationEvent {
  if (!options.texts && !options.phones) return event;
  const text = (value: string) =>
    options.texts && value !== '' ? REDACTED_TEXT : options.phones ? maskPhones(value) : value;
  const name = (value: string | null) => (value !== null && options.phones ? maskPhones(value) : value);
  return {
    ...event,
    text: text(event.text),
    caption: text(event.caption),
    senderName: name(event.senderName),
    conversationLabel: name(event.conversationLabel),
  };
}

export function redactedFields(options: RedactOptions): ('texts' | 'phones')[] {
  return [...(options.texts ? (['texts'] as const) : []), ...(options.phones ? (['phones'] as const) : [])];
}
