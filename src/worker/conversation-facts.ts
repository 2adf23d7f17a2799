import type { ConversationEvent } from '../events/conversation-event.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';
import type { ConversationFacts, HistoryMessage } from './ports.js';

/**
 * What the bridge remembers about a conversation so that rules can be decided without asking the
 * platform each time: when the customer last wrote (for the 24-hour window), whether a first
 * message was seen, when once-per-conversation actions and rules with a cooldown last ran,
 * which texts were sent moments ago, and its tags (rules/tags.ts). All of it lives in ONE hash per conversation
 * (`keys.conversation`, field prefixes below) so a run reads it with one command. Events of one
 * conversation are processed one at a time (order gate), so read-modify-write is safe here. It
 * expires `retention.conversations` after the last customer message (store-ttls.ts), never
 * earlier than a pending timer it registers is due.
 */

/** Field names and prefixes of the conversation hash. */
export const CONVERSATION_FIELDS = {
  lastIn: 'lastIn',
  firstIn: 'firstIn',
  historyChecked: 'historyChecked',
  once: 'O:',
  cooldown: 'C:',
  timer: 'T:',
  recent: 'R:',
  /** Platform message id -> ms: notes and replies the bridge sent (exactly-once/own-sends.ts). */
  sentId: 'S:',
  /** Rule name -> its open burst of customer messages (bursts/burst-store.ts). */
  burst: 'B:',
  /** Tag -> ms when it expires, '0' for never (rules/tags.ts, exactly-once/tag-actions.ts). */
  tag: 'G:',
} as const;

/**
 * A timer's registration (field `timer` + its id, worker/timers/timers.ts): the pending prefix and
 * the kinds of event that cancel it while it waits, `firing` once it fired and its actions run.
 */
export const TIMER_REGISTRATION = { pending: 'p:', firing: 'firing' } as const;

export interface SendChain {
  /** ms: when the first send of the run began. */
  since: number;
  /** Sends in the run, every one done. */
  count: number;
}

export interface StoredFacts {
  lastCustomerMessageAt: Date | null;
  /** Event key of the first customer message the bridge saw in this conversation. */
  firstEventKey: string | null;
  /** True once history was consulted for the first-message question. */
  historyChecked: boolean;
  onceMarks: Record<string, string>;
  /** Rule name -> ISO time it last fired, for rules with `cooldown`. */
  cooldowns: Record<string, string>;
  /** Text hash -> ms when a note or reply with that text was last sent (see exactly-once/sent-marks.ts). */
  recentlySent: Record<string, number>;
  /**
   * Text hash -> the run of sends of that text, each within the collision window of the next, when
   * every one of them is known to have reached the platform: when the first began and how many
   * there were. Absent when that is not known (a send in flight, of unknown outcome, or a text the
   * platform may store as several messages or none). See exactly-once/sent-marks.ts.
   */
  recentChains: Record<string, SendChain>;
  /** Message id -> ms when the bridge sent it (to recognise the platform's echo of it). */
  sentIds: Record<string, number>;
  /** Tag -> ms when it expires, null for never; expired ones too (ignored when read, deleted when the event leaves). */
  tags: Record<string, number | null>;
}

function parseDate(value: string | undefined): Date | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Reads the conversation hash (as HGETALL returns it, or as a flat field/value list). */
export function toStoredFacts(hash: Record<string, string> | readonly unknown[]): StoredFacts {
  const fields: Record<string, string> = {};
  if (Array.isArray(hash)) {
    for (let i = 0; i + 1 < hash.length; i += 2) fields[String(hash[i])] = String(hash[i + 1]);
  } else Object.assign(fields, hash);
  const onceMarks: Record<string, string> = {};
  const cooldowns: Record<string, string> = {};
  const recentlySent: Record<string, number> = {};
  const recentChains: Record<string, SendChain> = {};
  const sentIds: Record<string, number> = {};
  const tags: Record<string, number | null> = {};
  for (const [field, value] of Object.entries(fields)) {
    const prefix = field.slice(0, 2);
    if (prefix === CONVERSATION_FIELDS.once) onceMarks[field.slice(2)] = value;
    else if (prefix === CONVERSATION_FIELDS.cooldown) cooldowns[field.slice(2)] = value;
    else if (prefix === CONVERSATION_FIELDS.recent) {
      const mark = parseSentMark(value);
      recentlySent[field.slice(2)] = mark.at;
      if (mark.chain) recentChains[field.slice(2)] = mark.chain;
    } else if (prefix === CONVERSATION_FIELDS.sentId) sentIds[field.slice(2)] = Number(value);
    else if (prefix === CONVERSATION_FIELDS.tag) tags[field.slice(2)] = parseTagExpiry(value);
  }
  return {
    lastCustomerMessageAt: parseDate(fields.lastIn),
    firstEventKey: fields.firstIn ?? null,
    historyChecked: fields.historyChecked === '1',
    onceMarks,
    cooldowns,
    recentlySent,
    recentChains,
    sentIds,
    tags,
  };
}

/** A tag field's value: ms since epoch, '0' for never; anything else reads as expired (0). */
function parseTagExpiry(value: string): number | null {
  if (value === '0') return null;
  const ms = Number(value);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : 0;
}

/**
 * A sent-text mark (`R:<hash>`): `<ms>` alone, or `<ms>|<since>|<count>` when the run of sends it
 * closes is known (`SendChain`). Anything else (an older version's value included) reads as
 * "not known": the safe reading, which makes the next send of the text read the history first.
 */
export function parseSentMark(value: string): { at: number; chain: SendChain | null } {
  const parts = value.split('|');
  const at = Number(parts[0]);
  if (parts.length !== 3) return { at, chain: null };
  const since = Number(parts[1]);
  const count = Number(parts[2]);
  const valid = Number.isSafeInteger(since) && since > 0 && Number.isSafeInteger(count) && count > 0;
  return valid ? { at, chain: { since, count } } : { at, chain: null };
}

export function formatSentMark(at: number, chain: SendChain | null): string {
  return chain ? `${at}|${chain.since}|${chain.count}` : String(at);
}

/** The facts alone (a fired timer reads them; an event's run gets them from processor/prepare-run.ts). */
export async function loadFacts(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
): Promise<StoredFacts> {
  return toStoredFacts(await redis.hgetall(keys.conversation(conversationId)));
}

/**
 * The facts once a customer message is recorded: the last-customer-message time moves forward,
 * never back, and the first message is remembered. Pure: processor/prepare-run.ts makes the same change in
 * RedisClient, in the same script that read the facts.
 */
export function withCustomerMessage(stored: StoredFacts, event: ConversationEvent): StoredFacts {
  const at = new Date(event.occurredAt);
  const next: StoredFacts = { ...stored };
  if (!stored.lastCustomerMessageAt || at > stored.lastCustomerMessageAt) next.lastCustomerMessageAt = at;
  if (!stored.firstEventKey) next.firstEventKey = event.key;
  return next;
}

/**
 * Sets fields of a conversation hash and gives it the conversation's expiry, unless it has a
 * longer one already (a pending timer's registration keeps it past the timer's due time).
 * KEYS: conversation hash. ARGV: ttl ms, then fields and values.
 */
const SET_FIELDS_LUA = `
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
`;
const setFieldsScript = defineRedisScript<null>('ConversationSetFields', 1, SET_FIELDS_LUA);

/** Learns the last customer message time from history (the bridge started after it). */
export async function learnFromHistory(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
  history: AsyncIterable<HistoryMessage>,
  currentMessageId: string | null,
  ttlSeconds: number,
): Promise<{ lastCustomerMessageAt: Date | null; earlierCustomerMessages: number }> {
  let last: Date | null = null;
  let earlier = 0;
  for await (const message of history) {
    if (message.sender !== 'user') continue;
    if (message.messageId !== null && message.messageId === currentMessageId) continue;
    earlier += 1;
    if (message.sentAt && (!last || message.sentAt > last)) last = message.sentAt;
  }
  const key = keys.conversation(conversationId);
  const fields: Record<string, string> = { historyChecked: '1' };
  if (last) fields.lastIn = last.toISOString();
  await setFieldsScript(redis, [key], [ttlSeconds * 1000, ...Object.entries(fields).flat()]);
  return { lastCustomerMessageAt: last, earlierCustomerMessages: earlier };
}

/**
 * The facts once the history taught what the bridge did not know (`learnFromHistory`): the later
 * of the two last customer messages, history checked, and an event that looked like the first
 * customer message is not when the history holds earlier ones.
 */
export function withHistory(
  facts: StoredFacts,
  learned: { lastCustomerMessageAt: Date | null; earlierCustomerMessages: number },
  eventKey: string,
): StoredFacts {
  return {
    ...facts,
    lastCustomerMessageAt: laterOf(facts.lastCustomerMessageAt, learned.lastCustomerMessageAt),
    historyChecked: true,
    firstEventKey:
      learned.earlierCustomerMessages > 0 && facts.firstEventKey === eventKey
        ? 'history'
        : facts.firstEventKey,
  };
}

function laterOf(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}

/** The facts the evaluator sees for one event. */
export function factsForEvaluation(stored: StoredFacts, event: ConversationEvent): ConversationFacts {
  return {
    lastCustomerMessageAt: stored.lastCustomerMessageAt,
    isFirstCustomerMessage:
      event.kind === 'message_in' && (stored.firstEventKey === null || stored.firstEventKey === event.key),
    onceMarks: stored.onceMarks,
    cooldowns: stored.cooldowns,
    tags: stored.tags,
  };
}

/** The conversation-hash fields that remember when rules with a `cooldown` fired. */
export function cooldownFields(
  plan: { matched: readonly { rule: string; cooldownMs: number | null }[] },
  at: Date,
): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const matched of plan.matched) {
    if (matched.cooldownMs !== null)
      fields[`${CONVERSATION_FIELDS.cooldown}${matched.rule}`] = at.toISOString();
  }
  return fields;
}
