import { ConvoBridgeError } from '../base/errors.js';
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

/** A customer named by `forget --customer`: a phone number or an e-mail address. */
export type Customer =
  | { kind: 'phone'; written: string; digits: string }
  | { kind: 'email'; written: string; address: string };

export class CustomerQueryError extends ConvoBridgeError {
  constructor(message: string) {
    super(message, { code: 'CUSTOMER_QUERY_INVALID' });
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** A phone number as people write it: digits with optional +, spaces, dots, dashes, parentheses. */
const PHONE_WRITTEN = /^\+?[\d\s.()-]+$/;
/** Phone-like runs inside a text (at least 7 digits with single separators between). */
const PHONE_IN_TEXT = /\+?\(?\d(?:[\s.()-]?\d){6,}/g;
const EMAIL_IN_TEXT = /[^\s@<>()[\]"',;:]+@[^\s@<>()[\]"',;:]+\.[^\s@<>()[\]"',;:]+/g;

/** The significant digits of a phone number: digits only, leading zeros dropped. */
function significant(digits: string): string {
  return digits.replace(/^0+/, '');
}

/** Fewest significant digits a phone number must have to be searched for (shorter ones match too much). */
export const MIN_PHONE_DIGITS = 8;

export function parseCustomer(text: string): Customer {
  const written = text.trim();
  if (written.includes('@')) {
    if (!EMAIL.test(written)) {
      throw new CustomerQueryError(
        `--customer "${written}" is not an e-mail address (name@example.com) nor a phone number`,
      );
    }
    return { kind: 'email', written, address: written.toLowerCase() };
  }
  if (PHONE_WRITTEN.test(written)) {
    const digits = significant(written.replace(/\D/g, ''));
    if (digits.length >= MIN_PHONE_DIGITS && digits.length <= 15) return { kind: 'phone', written, digits };
  }
  throw new CustomerQueryError(
    `--customer "${written}" is neither a phone number (${MIN_PHONE_DIGITS}-15 digits, e.g. +62 812-3456-7890 or 0812 3456 7890) nor an e-mail address (name@example.com)`,
  );
}

/** The coarse filter for the stores' scripts (confirmed by customerIn on each candidate). */
export function customerNeedles(customer: Customer): Needles {
  if (customer.kind === 'email') return { mode: 'lower', values: [customer.address] };
  // The last digits are the same whether the number was written with its country code or a
  // leading 0 (+62 812... and 0812...).
  return { mode: 'digits', values: [customer.digits.slice(-MIN_PHONE_DIGITS)] };
}

/**
 * Whether a text holds the customer's phone number or e-mail address. Phone numbers match when one
 * number's significant digits end with the other's (+62 812-3456-7890, 0812 3456 7890 and
 * 81234567890 are one number).
 */
export function customerIn(text: string | null | undefined, customer: Customer): boolean {
  if (!text) return false;
  if (customer.kind === 'email') {
    for (const found of text.matchAll(EMAIL_IN_TEXT)) {
      if (found[0].toLowerCase() === customer.address) return true;
    }
    return false;
  }
  for (const found of text.matchAll(PHONE_IN_TEXT)) {
    const digits = significant(found[0].replace(/\D/g, ''));
    if (digits.length < MIN_PHONE_DIGITS) continue;
    if (digits.endsWith(customer.digits) || customer.digits.endsWith(digits)) return true;
  }
  return false;
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
