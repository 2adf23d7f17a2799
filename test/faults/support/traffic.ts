import { setTimeout as sleep } from 'node:timers/promises';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { AdminClient, ChannelType } from './admin-client.js';
import { type MessageKind, messageOf, type PlannedMessage, type SentMessage } from './expectations.js';

/**
 * Customer traffic for the scenarios: many conversations on a mix of channels, each with a few
 * messages (complaints, catalog requests, neutral messages), sent through the emulator's admin API
 * so that the emulator emits real webhooks. Deterministic for a seed.
 */
export interface PlannedConversation {
  id: string;
  channel: { type: ChannelType; id: string };
}

export interface TrafficPlan {
  conversations: PlannedConversation[];
  /** In sending order: round-robin over the conversations, so conversations interleave. */
  messages: PlannedMessage[];
}

// The example config maps whatsapp + ch_waba_1 to whatsapp_api and every instagram channel to
// instagram (both with the 24-hour window); the others have no window.
const CHANNELS: readonly PlannedConversation['channel'][] = [
  { type: 'telegram', id: 'ch_tg' },
  { type: 'webchat', id: 'ch_web' },
  { type: 'whatsapp_qr', id: 'ch_wa_qr' },
  { type: 'whatsapp_api', id: 'ch_waba_1' },
  { type: 'instagram', id: 'ch_ig' },
];

export function planTraffic(options: {
  events: number;
  perConversation: number;
  seed: number;
  stem: string;
  /** Shares of complaints and catalog requests; the rest are neutral. */
  mix?: { complaint: number; catalog: number };
}): TrafficPlan {
  const random = createSeededRandom(options.seed);
  const mix = options.mix ?? { complaint: 0.35, catalog: 0.3 };
  const count = Math.max(1, Math.ceil(options.events / options.perConversation));
  const conversations = Array.from({ length: count }, (_, i) => ({
    id: `${options.stem}-${String(i).padStart(5, '0')}`,
    channel: CHANNELS[i % CHANNELS.length] ?? { type: 'telegram' as const, id: 'ch_tg' },
  }));
  const messages: PlannedMessage[] = [];
  for (let round = 0; messages.length < options.events; round++) {
    for (const conversation of conversations) {
      if (messages.length >= options.events) break;
      const draw = random();
      const kind: MessageKind =
        draw < mix.complaint ? 'complaint' : draw < mix.complaint + mix.catalog ? 'catalog' : 'neutral';
      messages.push(messageOf(conversation.id, kind, Math.floor(random() * 1000) + round));
    }
  }
  return { conversations, messages };
}

/** Runs `fn` over items with at most `limit` at a time; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

export async function createConversations(
  admin: AdminClient,
  conversations: readonly PlannedConversation[],
  label = 'Budi',
): Promise<void> {
  await mapLimit(conversations, 8, (c) =>
    admin.createConversation({ id: c.id, label, channel: { ...c.channel, name: `channel ${c.channel.id}` } }),
  );
}

export interface SendOptions {
  /** Messages in flight at once (admin calls). */
  concurrency: number;
  /** Average messages per second; unpaced when omitted. */
  ratePerSecond?: number;
  /** Stop sending early (e.g. the scenario's deadline); unsent messages are left out of the result. */
  shouldStop?: () => boolean;
  /** When the customer wrote, for messages placed in the past (epoch ms); now when omitted. */
  at?: (message: PlannedMessage, index: number) => number | undefined;
  onSent?: (message: SentMessage, index: number) => void;
}

/**
 * Sends customer messages through the emulator, keeping each conversation's messages in order
 * (the next one of a conversation is sent only after the previous one was accepted).
 */
export async function sendMessages(
  admin: AdminClient,
  messages: readonly PlannedMessage[],
  options: SendOptions,
): Promise<SentMessage[]> {
  const started = Date.now();
  const previous = new Map<string, Promise<unknown>>();
  const sent: (SentMessage | undefined)[] = await mapLimit(messages, options.concurrency, async (m, i) => {
    if (options.shouldStop?.()) return undefined;
    if (options.ratePerSecond !== undefined) {
      const due = started + (i * 1000) / options.ratePerSecond;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    const before = previous.get(m.conversationId);
    const mine = (async () => {
      await before?.catch(() => undefined);
      const at = options.at?.(m, i);
      return admin.customerMessage(m.conversationId, m.text, at);
    })();
    previous.set(m.conversationId, mine);
    const view = await mine;
    const result: SentMessage = { ...m, messageId: view.messageId };
    options.onSent?.(result, i);
    return result;
  });
  return sent.filter((m): m is SentMessage => m !== undefined);
}

/** Groups sent messages by conversation, keeping their order. */
export function byConversation<T extends { conversationId: string }>(
  messages: readonly T[],
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const message of messages) {
    const list = groups.get(message.conversationId);
    if (list) list.push(message);
    else groups.set(message.conversationId, [message]);
  }
  return groups;
}
