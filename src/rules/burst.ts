import { formatDuration } from '../base/duration.js';
import type { ConversationEvent, EventKind } from '../events/conversation-event.js';

/**
 * Bursts: a `message_in` rule with `debounce:` is evaluated once per burst of the
 * customer's messages rather than per message. A burst begins with a customer message, takes in
 * every later one, and ends when the customer has been quiet for `debounce` or `max_wait` after it
 * began, whichever comes first. Times are when the bridge received each message (`receivedAt`,
 * the receiver's clock): the platform's clock may differ from ours, and a backlog in the worker
 * must not split a burst. Pure: the worker keeps bursts in Redis (worker/bursts/), explain, rule
 * tests and backtest group messages with `groupBursts`.
 */

export interface BurstSettings {
  debounceMs: number;
  maxWaitMs: number;
  /** Event kinds that cancel an open burst (an agent's reply, say); never message_in. */
  unless: EventKind[];
}

/** `max_wait` when a rule gives none: five quiet periods. */
export const DEFAULT_MAX_WAIT_FACTOR = 5;
/** Longest `debounce`: a longer wait is a timer's job (`after:`). */
export const MAX_DEBOUNCE_MS = 3_600_000;
/** Longest `max_wait`: an open burst keeps its texts in the conversation's state meanwhile. */
export const MAX_WAIT_LIMIT_MS = 86_400_000;

/**
 * How much of a burst's text is kept (the worker keeps it in the conversation hash while the burst
 * is open, docs/privacy.md): each message's first `messageChars` characters, and messages while
 * their texts take at most `keptBytes` bytes (UTF-8) and `keptMessages` entries. Later messages
 * still count and still extend the burst; conditions and `{{burst.text}}` see the kept texts.
 */
export const BURST_TEXT_LIMITS = { messageChars: 1_000, keptBytes: 4_000, keptMessages: 50 } as const;

/** A burst as the rules see it. */
export interface Burst {
  /** Messages in the burst, those whose text was not kept included. */
  count: number;
  /** The kept texts, in order (each: the message text, and its caption on a line of its own). */
  texts: readonly string[];
  /** Messages whose text was not kept (past BURST_TEXT_LIMITS). */
  droppedTexts: number;
  /** Some message of the burst has media. */
  hasMedia: boolean;
  /** ISO instants: when the first and the last message were received. */
  firstAt: string;
  lastAt: string;
  /** Event key of the first message (first_message: the burst holds the conversation's first message). */
  firstEventKey: string;
  /**
   * The last message: what `event.*` templates, `reply_to_message`, forwards and the channel's
   * reply window read. Its text and caption are cut to BURST_TEXT_LIMITS.messageChars.
   */
  lastEvent: ConversationEvent;
}

/** What text conditions and `{{burst.text}}` read: the kept texts joined with a newline. */
export function burstText(burst: Pick<Burst, 'texts'>): string {
  return burst.texts.join('\n');
}

/** When the burst is evaluated (ms): quiet for debounce, or max_wait after it began. */
export function burstDueAt(settings: BurstSettings, firstAtMs: number, lastAtMs: number): number {
  return Math.min(lastAtMs + settings.debounceMs, firstAtMs + settings.maxWaitMs);
}

/** What ended a burst, in words ("quiet for 20s", "max_wait 2m after it began"). */
export function burstEnd(settings: BurstSettings, firstAtMs: number, lastAtMs: number): string {
  return lastAtMs + settings.debounceMs <= firstAtMs + settings.maxWaitMs
    ? `quiet for ${formatDuration(settings.debounceMs)}`
    : `max_wait ${formatDuration(settings.maxWaitMs)} after it began`;
}

/** The burst settings in words, for reasons and explain. */
export function describeBurstSettings(settings: BurstSettings): string {
  const unless = settings.unless.length > 0 ? `, cancelled by ${settings.unless.join(' or ')}` : '';
  return `debounce ${formatDuration(settings.debounceMs)}, max_wait ${formatDuration(settings.maxWaitMs)}${unless}`;
}

function cut(text: string): string {
  const max = BURST_TEXT_LIMITS.messageChars;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A message's part of the burst text: its text and caption (each cut), one per line. */
export function burstMessageText(event: Pick<ConversationEvent, 'text' | 'caption'>): string {
  const text = cut(event.text);
  return event.caption === '' ? text : `${text}\n${cut(event.caption)}`;
}

/** The message as a burst keeps it (its text and caption cut). */
export function keptLastEvent(event: ConversationEvent): ConversationEvent {
  return { ...event, text: cut(event.text), caption: cut(event.caption) };
}

export function messageHasMedia(event: Pick<ConversationEvent, 'attachments' | 'contentType'>): boolean {
  return event.attachments.length > 0 || ['image', 'video', 'audio', 'document'].includes(event.contentType);
}

/** The instant a message counts at (ms). */
export function messageTime(event: Pick<ConversationEvent, 'receivedAt'>): number {
  return Date.parse(event.receivedAt);
}

const utf8 = new TextEncoder();
const bytes = (text: string) => utf8.encode(text).length;

/** A burst of one message. */
export function startBurst(event: ConversationEvent): Burst {
  const at = new Date(messageTime(event)).toISOString();
  return {
    count: 1,
    texts: [burstMessageText(event)],
    droppedTexts: 0,
    hasMedia: messageHasMedia(event),
    firstAt: at,
    lastAt: at,
    firstEventKey: event.key,
    lastEvent: keptLastEvent(event),
  };
}

/** The burst with one more message (the worker's Redis script does the same, worker/bursts/). */
export function addToBurst(burst: Burst, event: ConversationEvent): Burst {
  const text = burstMessageText(event);
  const size = burst.texts.reduce((sum, t) => sum + bytes(t), 0);
  const keep =
    burst.texts.length < BURST_TEXT_LIMITS.keptMessages && size + bytes(text) <= BURST_TEXT_LIMITS.keptBytes;
  const at = messageTime(event);
  return {
    count: burst.count + 1,
    texts: keep ? [...burst.texts, text] : burst.texts,
    droppedTexts: burst.droppedTexts + (keep ? 0 : 1),
    hasMedia: burst.hasMedia || messageHasMedia(event),
    firstAt: burst.firstAt,
    lastAt: at > Date.parse(burst.lastAt) ? new Date(at).toISOString() : burst.lastAt,
    firstEventKey: burst.firstEventKey,
    lastEvent: keptLastEvent(event),
  };
}

/** A burst and the instant it ends (is evaluated). */
export interface GroupedBurst {
  burst: Burst;
  /** ms */
  dueAt: number;
  /** What ended it, in words. */
  end: string;
}

/**
 * Customer messages (message_in, in the order they arrived) grouped into bursts the way the worker
 * groups them: a message received before the open burst is due joins it, a later one begins the
 * next. The last burst ends when its due time comes (as if nothing more arrived).
 */
export function groupBursts(messages: readonly ConversationEvent[], settings: BurstSettings): GroupedBurst[] {
  const out: GroupedBurst[] = [];
  let open: Burst | undefined;
  const close = (burst: Burst) => {
    const first = Date.parse(burst.firstAt);
    const last = Date.parse(burst.lastAt);
    out.push({ burst, dueAt: burstDueAt(settings, first, last), end: burstEnd(settings, first, last) });
  };
  for (const message of messages) {
    if (
      open &&
      messageTime(message) >= burstDueAt(settings, Date.parse(open.firstAt), Date.parse(open.lastAt))
    ) {
      close(open);
      open = undefined;
    }
    open = open ? addToBurst(open, message) : startBurst(message);
  }
  if (open) close(open);
  return out;
}
