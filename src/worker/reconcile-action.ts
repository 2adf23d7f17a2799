import type { HistoryMessage, PlannedAction } from './ports.js';

/**
 * Decides, from the conversation's history, whether an action whose outcome is unknown (the
 * worker died mid-call, or the platform timed out after taking the request) already happened.
 *
 * A note or reply counts as present when the history holds a message from the business side with
 * the same text (or media URL), sent no earlier than `startedAt - skewMs`, and not already claimed
 * by another action of the same ledger. Idempotent actions (need-human, timers, signed forwards
 * with a stable id) are simply done again, so they report `redo`.
 *
 * Limits (stated in the README): the platform rewrites texts with links (removes unreachable
 * ones, splits image links), so texts are compared with links removed; an agent typing the very
 * same text within the skew would be mistaken for ours.
 *
 * The same text sent moments earlier for ANOTHER event of the conversation (a customer repeating
 * a complaint or a catalog request) is within the skew too, and would be taken for this action's
 * message, losing it. `afterId` (history messages up to it existed before the call began) rules
 * those out; the worker records it when such a collision is possible (execute-actions.ts).
 */
export type ReconcileVerdict =
  | { kind: 'present'; messageId: string | null }
  | { kind: 'absent' }
  | { kind: 'redo' };

const URL_PATTERN = /https?:\/\/\S+/gi;

export function comparableText(text: string): string {
  return text.replace(URL_PATTERN, ' ').normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
}

export function reconcileAgainstHistory(
  action: PlannedAction,
  startedAt: number,
  history: readonly HistoryMessage[],
  claimedMessageIds: ReadonlySet<string>,
  skewMs: number,
  afterId?: number,
): ReconcileVerdict {
  if (action.type !== 'note' && action.type !== 'reply') return { kind: 'redo' };
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
    return looksLikeNote && comparableText(message.text) === comparableText(action.text);
  }
  if (action.type !== 'reply') return false;
  if (message.isNote === true || (message.isNote === null && message.senderName === 'api')) return false;
  if ('text' in action.message) {
    const want = comparableText(action.message.text);
    return want !== '' && comparableText(message.text) === want;
  }
  const media = action.message.media;
  return (
    message.text.trim() === media.url ||
    (media.caption !== undefined && message.caption === media.caption && message.text.includes(media.url))
  );
}
