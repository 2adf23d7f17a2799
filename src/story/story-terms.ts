import { type Customer, customerKey } from '../base/customer-match.js';
import type { StoryOutcome } from './story-schema.js';

/**
 * The search terms of a story (each is one index set: story-writer.ts adds the conversation to it,
 * story-search.ts reads it). Pure; both sides build terms here, so they cannot disagree.
 */

/** A phone number's or an e-mail address's term (the same for every way of writing it). */
export const customerTerm = (customer: Customer): string => customerKey(customer);
export const tagTerm = (tag: string): string => `t:${tag}`;
export const ruleTerm = (rule: string): string => `r:${rule}`;
export const outcomeTerm = (outcome: StoryOutcome): string => `o:${outcome}`;
export const nameTerm = (word: string): string => `n:${word}`;

/** Words shorter than this are not indexed (nor searched): they would match too much. */
const MIN_NAME_WORD = 2;
/** At most this many words of one name are indexed. */
const MAX_NAME_WORDS = 6;

/**
 * The words of a name as indexed and searched: lower-cased, accents dropped (`José` is `jose`),
 * split at anything not a letter or digit, short ones left out.
 */
export function nameWords(name: string | null | undefined): string[] {
  if (!name) return [];
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length >= MIN_NAME_WORD);
  return [...new Set(words)].slice(0, MAX_NAME_WORDS);
}
