import { createHash } from 'node:crypto';
import { CONVERSATION_FIELDS, type SendChain, type StoredFacts } from '../conversation-facts.js';
import type { PlannedAction } from '../ports.js';
import { comparableText } from './reconcile-action.js';

// What a run remembers of its own sends, staged for the conversation hash: the text marks (`R:`)
// that guard against same-text collisions, the platform's ids of sent messages (`S:`, to know
// their echo, own-sends.ts) and once_per_conversation marks (`O:`).

/**
 * Same-text collisions (found by the fault-injection suite): a customer repeats a complaint or a
 * catalog request, the bridge sends the same note or reply again a few seconds later, and that
 * second call fails with an unknown outcome. Reconciliation looks for the text from `started -
 * skew` on, finds the FIRST message and wrongly counts the second action as done: the second note
 * or reply is lost. So every note and reply sent is remembered per conversation for a short while
 * (when its call begins, and again when it ends), and a call whose text was sent that recently
 * records, before it begins, what rules those earlier messages out. When every earlier send of
 * the text in that run of sends is known to have reached the platform (the mark says when the run
 * began and how many there were: `chain` in the ledger), reconciliation counts the text's messages
 * since then and finds this one's only if there is one more. Otherwise (a send of unknown outcome,
 * an older version's mark) the conversation's last history id is read first (`after`), and
 * reconciliation ignores everything up to it. The history is read only in that second case.
 */
export function sentTextKey(action: PlannedAction): string | null {
  if (action.type === 'note') return markKey(`note:${comparableText(action.text)}`);
  if (action.type !== 'reply') return null;
  return 'text' in action.message
    ? replyTextKey(action.message.text)
    : markKey(`media:${action.message.media.url}`);
}

/** The mark of a text reply: the same for the send and for its echo (own-sends.ts echoProbe). */
export function replyTextKey(text: string): string {
  return markKey(`reply:${comparableText(text)}`);
}

function markKey(form: string): string {
  return createHash('sha256').update(form).digest('hex').slice(0, 32);
}

/** How long a sent text can be mistaken for a later one: the skew on both clocks, and a second of `sent_at` rounding. */
export const collisionWindowMs = (reconcileSkewMs: number) => 2 * reconcileSkewMs + 1_000;

/** A note or reply about to be sent: its text mark, and the known run of the text's earlier sends. */
export interface SendingMark {
  field: string | null;
  /** The earlier sends this one continues ({since: now, count: 0} when none); null when not known. */
  prior: SendChain | null;
}

/**
 * Sends that can be counted in the history: exactly one message each. A text of links only may be
 * stored as several image messages, or as nothing once unreachable links are removed (interface,
 * POST /v1/message, behaviour 3), so its sends are never counted.
 */
export function countable(action: PlannedAction): boolean {
  if (action.type === 'note') return comparableText(action.text) !== '';
  if (action.type === 'reply')
    return !('text' in action.message) || comparableText(action.message.text) !== '';
  return false;
}

/** Sent-text marks too old to matter (a run's finish step deletes them from the conversation hash). */
export function staleSentMarks(facts: StoredFacts, reconcileSkewMs: number, now = Date.now()): string[] {
  const window = collisionWindowMs(reconcileSkewMs) + 60_000;
  return [
    ...Object.entries(facts.recentlySent)
      .filter(([, at]) => !(now - at <= window))
      .map(([field]) => `${CONVERSATION_FIELDS.recent}${field}`),
    ...staleSentIds(facts, now),
  ];
}

/** How long a sent message id is remembered: webhook retries of its echo end well within this. */
export const SENT_ID_TTL_MS = 60 * 60 * 1000;

/** The conversation-hash field of a message id the platform gave the bridge for a note or reply. */
export function sentIdField(messageId: string): string {
  return `${CONVERSATION_FIELDS.sentId}${messageId}`;
}

/** Sent-id marks older than SENT_ID_TTL_MS (a run's finish step deletes them). */
export function staleSentIds(facts: Pick<StoredFacts, 'sentIds'>, now: number): string[] {
  return Object.entries(facts.sentIds)
    .filter(([, at]) => !(now - at <= SENT_ID_TTL_MS))
    .map(([id]) => sentIdField(id));
}
