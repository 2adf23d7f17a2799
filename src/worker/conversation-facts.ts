import type { Redis } from 'ioredis';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { ConversationFacts, HistoryMessage } from './ports.js';

/**
 * What the bridge remembers about a conversation so that rules can be decided without asking the
 * platform each time: when the customer last wrote (for the 24-hour window), whether a first
 * message was seen, and when once-per-conversation actions last ran. Events of one conversation
 * are processed one at a time (order gate), so plain read-modify-write is safe here.
 */
const FACTS_TTL_SECONDS = 30 * 24 * 3600;

export interface StoredFacts {
  lastCustomerMessageAt: Date | null;
  /** Event key of the first customer message the bridge saw in this conversation. */
  firstEventKey: string | null;
  /** True once history was consulted for the first-message question. */
  historyChecked: boolean;
  onceMarks: Record<string, string>;
  /** Rule name -> ISO time it last fired, for rules with `cooldown`. */
  cooldowns: Record<string, string>;
}

function parseDate(value: string | undefined): Date | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function toStoredFacts(
  facts: Record<string, string>,
  once: Record<string, string>,
  cooldowns: Record<string, string>,
): StoredFacts {
  return {
    lastCustomerMessageAt: parseDate(facts.lastIn),
    firstEventKey: facts.firstIn ?? null,
    historyChecked: facts.historyChecked === '1',
    onceMarks: once,
    cooldowns,
  };
}

/** The facts alone (a fired timer reads them; an event's run gets them from prepare-run.ts). */
export async function loadFacts(
  redis: Redis,
  keys: BridgeKeys,
  conversationId: string,
): Promise<StoredFacts> {
  const [facts, once, cooldowns] = await Promise.all([
    redis.hgetall(keys.facts(conversationId)),
    redis.hgetall(keys.once(conversationId)),
    redis.hgetall(keys.cooldowns(conversationId)),
  ]);
  return toStoredFacts(facts, once, cooldowns);
}

/** Records a customer message: moves the last-customer-message time forward, never back. */
export async function recordCustomerMessage(
  redis: Redis,
  keys: BridgeKeys,
  stored: StoredFacts,
  event: ConversationEvent,
): Promise<StoredFacts> {
  const conversationId = event.conversationId ?? '';
  const at = new Date(event.occurredAt);
  const next: StoredFacts = { ...stored };
  const fields: Record<string, string> = {};
  if (!stored.lastCustomerMessageAt || at > stored.lastCustomerMessageAt) {
    next.lastCustomerMessageAt = at;
    fields.lastIn = at.toISOString();
  }
  if (!stored.firstEventKey) {
    next.firstEventKey = event.key;
    fields.firstIn = event.key;
  }
  if (Object.keys(fields).length > 0) {
    const key = keys.facts(conversationId);
    await redis.multi().hset(key, fields).expire(key, FACTS_TTL_SECONDS).exec();
  }
  return next;
}

/** Learns the last customer message time from history (the bridge started after it). */
export async function learnFromHistory(
  redis: Redis,
  keys: BridgeKeys,
  conversationId: string,
  history: AsyncIterable<HistoryMessage>,
  currentMessageId: string | null,
): Promise<{ lastCustomerMessageAt: Date | null; earlierCustomerMessages: number }> {
  let last: Date | null = null;
  let earlier = 0;
  for await (const message of history) {
    if (message.sender !== 'user') continue;
    if (message.messageId !== null && message.messageId === currentMessageId) continue;
    earlier += 1;
    if (message.sentAt && (!last || message.sentAt > last)) last = message.sentAt;
  }
  const key = keys.facts(conversationId);
  const fields: Record<string, string> = { historyChecked: '1' };
  if (last) fields.lastIn = last.toISOString();
  await redis.multi().hset(key, fields).expire(key, FACTS_TTL_SECONDS).exec();
  return { lastCustomerMessageAt: last, earlierCustomerMessages: earlier };
}

export async function markOnce(
  redis: Redis,
  keys: BridgeKeys,
  conversationId: string,
  onceKey: string,
  at: Date,
  ttlMs: number,
): Promise<void> {
  const key = keys.once(conversationId);
  await redis
    .multi()
    .hset(key, onceKey, at.toISOString())
    .pexpire(key, Math.max(ttlMs, FACTS_TTL_SECONDS * 1000))
    .exec();
}

/** The facts the evaluator sees for one event. */
export function factsForEvaluation(stored: StoredFacts, event: ConversationEvent): ConversationFacts {
  return {
    lastCustomerMessageAt: stored.lastCustomerMessageAt,
    isFirstCustomerMessage:
      event.kind === 'message_in' && (stored.firstEventKey === null || stored.firstEventKey === event.key),
    onceMarks: stored.onceMarks,
    cooldowns: stored.cooldowns,
  };
}

/** Remembers when rules with a `cooldown` fired, so the evaluator can hold them back. */
export async function recordCooldowns(
  redis: Redis,
  keys: BridgeKeys,
  conversationId: string,
  plan: { matched: readonly { rule: string; cooldownMs: number | null }[] },
  at: Date,
): Promise<void> {
  const withCooldown = plan.matched.filter((m) => m.cooldownMs !== null);
  if (withCooldown.length === 0) return;
  const key = keys.cooldowns(conversationId);
  const longest = Math.max(...withCooldown.map((m) => m.cooldownMs ?? 0));
  const fields = Object.fromEntries(withCooldown.map((m) => [m.rule, at.toISOString()]));
  await redis.multi().hset(key, fields).pexpire(key, longest).exec();
}
