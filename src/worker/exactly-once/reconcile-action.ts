import type { SendChain } from '../conversation-facts.js';
import type { HistoryMessage, PlannedAction } from '../ports.js';

/**
 * Decides, from the conversation's history, whether an action whose outcome is unknown (the
 * worker died mid-call, or the platform timed out after taking the request) already happened.
 *
 * A note or reply counts as present when the history holds a message from the business side with
 * the same text (or media URL), sent no earlier than `startedAt - skewMs`, and not already claimed
 * by another action of the same ledger. Idempotent actions (need-human, timers, signed forwards
 * with a stable id) are simply done again, so they report `redo`.
 *
 * Limits (stated in docs/guarantees.md): the platform rewrites texts with links (removes unreachable
 * ones, splits image links), so texts are compared as the platform would store them, word by word
 * with links removed (`comparableText`); an agent typing the very same words within the skew
 * would be mistaken for ours.
 *
 * The same text sent moments earlier for ANOTHER event of the conversation (a customer repeating
 * a complaint or a catalog request) is within the skew too, and would be taken for this action's
 * message, losing it. `afterId` (history messages up to it existed before the call began) rules
 * those out; or `chain`: `count` sends of the text, each known to have reached the platform, began
 * at `since` or later, so the text's messages since then are this action's only when there are
 * more than `count` (the newest is taken for it). The worker records one of the two when such a
 * collision is possible (sent-marks.ts).
 */
export type ReconcileVerdict =
  | { kind: 'present'; messageId: string | null }
  | { kind: 'absent' }
  | { kind: 'redo' };

/** A link as the platform finds it in a text (interface, POST /v1/message, behaviour 3). */
const LINK = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}]+$/;

/**
 * A text reduced to what survives the platform's rewriting (interface, POST /v1/message,
 * behaviour 3: an image link becomes a separate image message, an unreachable link is removed,
 * the rest stays): its words, in order, lower-cased, without links, punctuation or spacing. The
 * platform tidies what is left around a removed link ("See https://img/a.jpg, thanks" is stored
 * as "See, thanks"), so the comparison cannot be on characters; on words, the text we sent and
 * the text the platform stored agree whichever of its links were kept, split off or removed.
 * Texts that differ only in punctuation compare equal: a limit stated in docs/guarantees.md.
 */
export function comparableText(text: string): string {
  return text
    .normalize('NFC')
    .replace(LINK, ' ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The links of a text as the platform reads them (trailing punctuation is not part of a link). */
export function linksOf(text: string): string[] {
  return [...text.matchAll(LINK)].map((m) => m[0].replace(TRAILING_PUNCTUATION, ''));
}

/**
 * True when `stored` is what the platform may have made of the text we sent: the same words, or,
 * for a text of links only (nothing left once they are taken out), the text as it stood (a single
 * link is sent as it stands) or one of its links (an image link sent as an image message).
 */
export function storedFormMatches(sent: string, stored: string): boolean {
  const want = comparableText(sent);
  if (want !== '') return comparableText(stored) === want;
  const body = stored.trim();
  if (body === '') return false;
  return body === sent.trim() || linksOf(sent).includes(body);
}

export function reconcileAgainstHistory(
  action: PlannedAction,
  startedAt: number,
  history: readonly HistoryMessage[],
  claimedMessageIds: ReadonlySet<string>,
  skewMs: number,
  afterId?: number,
  chain?: SendChain,
): ReconcileVerdict {
  if (action.type !== 'note' && action.type !== 'reply') return { kind: 'redo' };
  if (chain) {
    // Counted, so claimed messages are not left out: the run's count includes them.
    const from = chain.since - skewMs;
    const ours = history
      .filter(
        (m) => m.sender !== 'user' && (m.sentAt === null || m.sentAt.getTime() >= from) && matches(action, m),
      )
      .sort((a, b) => a.id - b.id);
    const newest = ours.at(-1);
    return newest && ours.length > chain.count
      ? { kind: 'present', messageId: newest.messageId }
      : { kind: 'absent' };
  }
  const since = startedAt - skewMs;
  const candidates = history.filter(
    (m) =>
      m.sender !== 'user' &&
      (afterId === undefined || m.id > afterId) &&
      (m.sentAt === null || m.sentAt.getTime() >= since) &&
      (m.messageId === null || !claimedMessageIds.has(m.messageId)),
  );
  const found = candidates.find((m) => matches(action, m));
  return found ? { kind: 'present', messageId: found.messageId } : { kind: 'absent' };
}

function matches(action: PlannedAction, message: HistoryMessage): boolean {
  if (action.type === 'note') {
    const looksLikeNote = message.isNote === true || message.senderName === 'api';
    return looksLikeNote && storedFormMatches(action.text, message.text);
  }
  if (action.type !== 'reply') return false;
  if (message.isNote === true || (message.isNote === null && message.senderName === 'api')) return false;
  if ('text' in action.message) return storedFormMatches(action.message.text, message.text);
  const media = action.message.media;
  return (
    message.text.trim() === media.url ||
    (media.caption !== undefined && message.caption === media.caption && message.text.includes(media.url))
  );
}
