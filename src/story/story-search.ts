import { z } from 'zod';
import { readCustomer } from '../base/customer-match.js';
import { StoryQueryError } from './story-query-error.js';
import type { StoryQuery } from './story-schema.js';
import { customerTerm, nameTerm, nameWords, outcomeTerm, ruleTerm, tagTerm } from './story-terms.js';

/**
 * How a search is answered from the index (pure): the conversations `q` may name (its id, the
 * customer's phone number or e-mail address, words of the customer's name: any of them), and the
 * terms every answer must also be in (tag, rule, outcome).
 */
export interface SearchPlan {
  /** `q` taken as a conversation id (looked up directly); null without `q`. */
  conversation: string | null;
  /** `q` taken as terms: each group is a set of terms a conversation must all be in; any group will do. */
  alternatives: string[][];
  /** Terms every answer is in. */
  filters: string[];
  /** The tag asked for, checked against the conversation's current tags (a removed tag stays in its term's set). */
  tag: string | null;
}

export function planSearch(query: StoryQuery): SearchPlan {
  const alternatives: string[][] = [];
  let conversation: string | null = null;
  if (query.q !== undefined) {
    conversation = query.q;
    const customer = readCustomer(query.q);
    if (customer) alternatives.push([customerTerm(customer)]);
    else {
      const words = nameWords(query.q);
      if (words.length > 0) alternatives.push(words.map(nameTerm));
    }
  }
  const filters: string[] = [];
  if (query.tag !== undefined) filters.push(tagTerm(query.tag));
  if (query.rule !== undefined) filters.push(ruleTerm(query.rule));
  if (query.outcome !== undefined) filters.push(outcomeTerm(query.outcome));
  return { conversation, alternatives, filters, tag: query.tag ?? null };
}

/** Where the previous page ended: answers are ordered by last activity (newest first), then by id. */
export interface SearchCursor {
  /** Last activity (ms) of the last answer given. */
  s: number;
  /** Its conversation id. */
  c: string;
}

const CursorSchema = z.object({ s: z.number().int().nonnegative(), c: z.string() });

export function encodeCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function decodeCursor(text: string): SearchCursor {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
  } catch (error) {
    throw new StoryQueryError('cursor is not one this search returned: start again without cursor', error);
  }
}

/** Whether an answer comes after the cursor in the search's order. */
export function isAfter(score: number, conversation: string, cursor: SearchCursor | null): boolean {
  if (cursor === null) return true;
  return score < cursor.s || (score === cursor.s && conversation > cursor.c);
}

/** Newest first, then by id. */
export function byActivity(
  a: { score: number; conversation: string },
  b: { score: number; conversation: string },
) {
  return (
    b.score - a.score || (a.conversation < b.conversation ? -1 : a.conversation > b.conversation ? 1 : 0)
  );
}
