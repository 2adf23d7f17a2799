import type { ReplyWindowState } from '../ports.js';

/**
 * The worker's last word on a free-form reply (pure): send it only when the channel has no
 * window, or when the window is open and closes more than `safetyMarginMs` from now (a reply
 * decided at 23:59:59 would arrive after the edge). `guardUntil` is what the platform client is
 * told: past it, the client refuses the send even if this decision was made too early.
 */
export type ReplyWindowVerdict =
  | { send: true; guardUntil: Date | null }
  | { send: false; reason: 'closed' | 'unknown' | 'margin'; closesAt: Date | null };

export function replyWindowVerdict(
  window: ReplyWindowState,
  now: Date,
  safetyMarginMs: number,
): ReplyWindowVerdict {
  if (!window.applies) return { send: true, guardUntil: null };
  if (!window.closesAt) return { send: false, reason: 'unknown', closesAt: null };
  const left = window.closesAt.getTime() - now.getTime();
  if (!window.open || left <= 0) return { send: false, reason: 'closed', closesAt: window.closesAt };
  if (left <= safetyMarginMs) return { send: false, reason: 'margin', closesAt: window.closesAt };
  return { send: true, guardUntil: new Date(window.closesAt.getTime() - safetyMarginMs) };
}
