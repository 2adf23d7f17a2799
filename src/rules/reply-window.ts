import type { ConversationEvent } from '../events/conversation-event.js';
import { defaultChannelKind } from './default-channel-kind.js';
import { engineMatchValues } from './engine-values.js';
import type { ChannelConfig, ChannelKind } from './rules-settings-schema.js';

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

/** Where a conversation's channel kind came from. */
export interface ResolvedChannelKind {
  kind: ChannelKind | null;
  /** `channels`: an entry of the config matched; `default`: the built-in table by raw engine. */
  source: 'channels' | 'default' | 'none';
  /** Set when the default is an assumption the user should confirm (see default-channel-kind.ts). */
  assumption: string | null;
}

/**
 * True when a `match.engine` of the config names this channel's engine, normalised or raw. A
 * platform spelling also matches the canonical engine it stands for (`messenger` matches
 * `facebook`), except WhatsApp's: `waba` and `wa` tell API from QR numbers, so they match the raw
 * name only (`whatsapp` matches both).
 */
export function engineMatches(wanted: string, channel: ConversationEvent['channel']): boolean {
  const want = wanted.trim().toLowerCase();
  const engine = channel.engine.toLowerCase();
  if (want === engine || want === (channel.rawEngine ?? '').toLowerCase()) return true;
  return engine !== 'whatsapp' && engineMatchValues(want).includes(engine);
}

/**
 * The kind of the first `channels` entry whose every given field matches; when none does, the
 * built-in kind of the platform's raw engine name (safe without any mapping).
 */
export function resolveChannelKind(
  config: Pick<ReplyWindowSource, 'channels'>,
  channel: ConversationEvent['channel'],
): ResolvedChannelKind {
  for (const entry of config.channels) {
    const { engine, channelId, channelName } = entry.match;
    if (engine !== undefined && !engineMatches(engine, channel)) continue;
    if (channelId !== undefined && channelId !== channel.id) continue;
    if (channelName !== undefined && channelName.toLowerCase() !== (channel.name ?? '').toLowerCase())
      continue;
    return { kind: entry.kind, source: 'channels', assumption: null };
  }
  // Jobs queued by an older bridge have no raw engine: the normalised one is the best guess
  // (`whatsapp` then falls on the safe side).
  const fallback = defaultChannelKind(channel.rawEngine ?? channel.engine);
  if (fallback === null) return { kind: null, source: 'none', assumption: null };
  return { kind: fallback.kind, source: 'default', assumption: fallback.assumption };
}

/** The channel's kind (from `channels:`, else the built-in default); null when neither knows it. */
export function channelKind(
  config: Pick<ReplyWindowSource, 'channels'>,
  channel: ConversationEvent['channel'],
): ChannelKind | null {
  return resolveChannelKind(config, channel).kind;
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
