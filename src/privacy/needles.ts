import { type Customer, customerIn, MIN_PHONE_DIGITS } from '../base/customer-match.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { Needles } from './scan-stores.js';

/**
 * What identifies one conversation's entries in the stores: its canonical events carry
 * `"conversationId":"<id>"` (job data, timers, dead letters, recorded events, run results), and a
 * quarantined body holds the id as a JSON string inside the entry's JSON (escaped once more).
 */
export function conversationNeedles(conversationId: string): Needles {
  const quoted = JSON.stringify(conversationId);
  return {
    mode: 'plain',
    values: [`"conversationId":${quoted}`, JSON.stringify(quoted).slice(1, -1)],
  };
}

/** The coarse filter for the stores' scripts (confirmed by customerIn on each candidate). */
export function customerNeedles(customer: Customer): Needles {
  if (customer.kind === 'email') return { mode: 'lower', values: [customer.address] };
  // The last digits are the same whether the number was written with its country code or a
  // leading 0 (+62 812... and 0812...).
  return { mode: 'digits', values: [customer.digits.slice(-MIN_PHONE_DIGITS)] };
}

/** Whether an event's texts or names hold the customer. */
export function customerInEvent(
  event: Pick<ConversationEvent, 'text' | 'caption' | 'senderName' | 'conversationLabel'>,
  customer: Customer,
): boolean {
  return [event.text, event.caption, event.senderName, event.conversationLabel].some((text) =>
    customerIn(text, customer),
  );
}
