import type { ChannelConfig, ChannelKind } from '../config/config-schema.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { engineMatchValues } from './engine-values.js';

/** What replyWindow needs from the config (BridgeConfig and CompiledRules both have it). */
export interface ReplyWindowSource {
  channels: readonly ChannelConfig[];
  replyWindow: { appliesTo: readonly ChannelKind[]; hours: number };
}

export interface ReplyWindowState {
  /** The channel's kind is one the window applies to. */
  applies: boolean;
  channelKind: ChannelKind | null;
  /** Free-form replies are allowed now (always true when the window does not apply). */
  open: boolean;
  /** ISO instant the window closes; null when it does not apply or no customer message is known. */
  closesAt: string | null;
  /** How long it has been closed; 0 while open, null when unknown or not applicable. */
  closedForMs: number | null;
}

/** The kind of the first `channels` entry whose every given field matches; null when none does. */
export function channelKind(
  config: Pick<ReplyWindowSource, 'channels'>,
  channel: ConversationEvent['channel'],
) {
  for (const entry of config.channels) {
    const { engine, channelId, channelName } = entry.match;
    // `engine: messenger` stands for the canonical facebook too (engine-values.ts).
    if (engine !== undefined && !engineMatchValues(engine).includes(channel.engine.toLowerCase())) continue;
    if (channelId !== undefined && channelId !== channel.id) continue;
    if (channelName !== undefined && channelName.toLowerCase() !== (channel.name ?? '').toLowerCase())
      continue;
    return entry.kind;
  }
  return null;
}

/**
 * The free-form reply window (24 hours from the customer's last message on WhatsApp API and
 * Instagram; interface "Limits", webhook-payloads.md §4). Pure: the worker calls it again right
 * before sending, and applies its own safety margin to `closesAt`.
 */
export function replyWindow(
  config: ReplyWindowSource,
  channel: ConversationEvent['channel'],
  lastCustomerMessageAt: Date | null,
  now: Date,
): ReplyWindowState {
  const kind = channelKind(config, channel);
  const applies = kind !== null && config.replyWindow.appliesTo.includes(kind);
  if (!applies) return { applies, channelKind: kind, open: true, closesAt: null, closedForMs: null };
  if (lastCustomerMessageAt === null) {
    return { applies, channelKind: kind, open: false, closesAt: null, closedForMs: null };
  }
  const closes = lastCustomerMessageAt.getTime() + config.replyWindow.hours * 3_600_000;
  const open = now.getTime() < closes;
  return {
    applies,
    channelKind: kind,
    open,
    closesAt: new Date(closes).toISOString(),
    closedForMs: open ? 0 : now.getTime() - closes,
  };
}
