import { ConvoBridgeError } from './errors.js';

/**
 * Phone numbers and e-mail addresses as customers write them, and how one written form matches
 * another: `forget --customer` finds a customer's conversations with it (privacy/), and the
 * conversations' stories index what customers wrote by it (story/), so that a search for
 * `+62 812-3456-7890` finds the customer who wrote `0812 3456 7890`. Pure.
 */

/** A customer named by `forget --customer` or a search: a phone number or an e-mail address. */
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

/** A customer as written, or null when the text is neither a phone number nor an e-mail address. */
export function readCustomer(text: string): Customer | null {
  const written = text.trim();
  if (written.includes('@')) {
    return EMAIL.test(written) ? { kind: 'email', written, address: written.toLowerCase() } : null;
  }
  if (PHONE_WRITTEN.test(written)) {
    const digits = significant(written.replace(/\D/g, ''));
    if (digits.length >= MIN_PHONE_DIGITS && digits.length <= 15) return { kind: 'phone', written, digits };
  }
  return null;
}

export function parseCustomer(text: string): Customer {
  const customer = readCustomer(text);
  if (customer) return customer;
  const written = text.trim();
  if (written.includes('@')) {
    throw new CustomerQueryError(
      `--customer "${written}" is not an e-mail address (name@example.com) nor a phone number`,
    );
  }
  throw new CustomerQueryError(
    `--customer "${written}" is neither a phone number (${MIN_PHONE_DIGITS}-15 digits, e.g. +62 812-3456-7890 or 0812 3456 7890) nor an e-mail address (name@example.com)`,
  );
}

/**
 * The key a customer is looked up by in an index: the last MIN_PHONE_DIGITS significant digits of a
 * phone number (the same whether it was written with its country code or a leading 0: +62 812...
 * and 0812...), or the lower-cased e-mail address. Two written forms that `customerIn` matches
 * have the same key.
 */
export function customerKey(customer: Customer): string {
  return customer.kind === 'email'
    ? `e:${customer.address}`
    : `p:${customer.digits.slice(-MIN_PHONE_DIGITS)}`;
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

/** Every phone number and e-mail address a text holds, as customers (the same recognition as customerIn). */
export function customersIn(text: string | null | undefined): Customer[] {
  if (!text) return [];
  const found: Customer[] = [];
  if (text.includes('@')) {
    for (const match of text.matchAll(EMAIL_IN_TEXT)) {
      // The full stop that ends a sentence is not part of the address.
      const written = match[0].replace(/\.+$/, '');
      found.push({ kind: 'email', written, address: written.toLowerCase() });
    }
  }
  for (const match of text.matchAll(PHONE_IN_TEXT)) {
    const digits = significant(match[0].replace(/\D/g, ''));
    if (digits.length >= MIN_PHONE_DIGITS && digits.length <= 15) {
      found.push({ kind: 'phone', written: match[0].trim(), digits });
    }
  }
  return found;
}
