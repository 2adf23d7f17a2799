import type { ChannelKind } from './rules-settings-schema.js';

/**
 * The channel kind a conversation gets when no `channels:` entry matches it (the reply
 * window must hold with no mapping at all). Keyed by the engine exactly as the platform named it
 * (`channel.rawEngine`, trimmed and lower-cased), so that `waba` and `wa` stay apart.
 *
 * - `waba` (and its longer spellings) is the WhatsApp Business API: windowed.
 * - `wa` is the QR-linked WhatsApp number in the current form (the business API is `waba` there),
 *   which has no window (webhook-payloads.md §4). This is an assumption about the platform's
 *   naming, so the worker logs it once per channel id with the line that overrides it.
 * - `whatsapp` (the earlier form and the older doc) cannot tell the API from a QR link: the safe
 *   side is the window (a QR reply held after 24 h runs `when_closed`, so the team is told; a
 *   business-API reply sent after 24 h would fail at Meta and the customer would get nothing).
 *   Also logged once per channel id with the line to add.
 * - Instagram and Messenger: windowed (interface "Limits"; webhook-payloads.md §4 for Messenger).
 * - Everything else (Telegram, Slack, Intercom, web chat, SocialChat): no window.
 */
export interface DefaultChannelKind {
  kind: ChannelKind;
  /** Set when the engine alone does not prove the kind: why, for the log line and `validate`. */
  assumption: string | null;
}

const WHATSAPP_AMBIGUOUS =
  'the engine "whatsapp" does not tell the business API from a QR-linked number, so the reply window is applied (the safe side)';
const WHATSAPP_QR_ASSUMED =
  'the engine "wa" is taken for a QR-linked number (the business API is "waba"), so no reply window is applied';

const DEFAULTS: ReadonlyMap<string, DefaultChannelKind> = new Map<string, DefaultChannelKind>([
  ['waba', { kind: 'whatsapp_api', assumption: null }],
  ['whatsapp_api', { kind: 'whatsapp_api', assumption: null }],
  ['whatsapp_business', { kind: 'whatsapp_api', assumption: null }],
  ['whatsapp-business', { kind: 'whatsapp_api', assumption: null }],
  ['wa', { kind: 'whatsapp_qr', assumption: WHATSAPP_QR_ASSUMED }],
  ['whatsapp', { kind: 'whatsapp_api', assumption: WHATSAPP_AMBIGUOUS }],
  ['instagram', { kind: 'instagram', assumption: null }],
  ['ig', { kind: 'instagram', assumption: null }],
  ['facebook', { kind: 'messenger', assumption: null }],
  ['fb', { kind: 'messenger', assumption: null }],
  ['messenger', { kind: 'messenger', assumption: null }],
  ['telegram', { kind: 'telegram', assumption: null }],
  ['tg', { kind: 'telegram', assumption: null }],
  ['slack', { kind: 'slack', assumption: null }],
  ['intercom', { kind: 'intercom', assumption: null }],
  ['socialchat', { kind: 'socialchat', assumption: null }],
  ['social_chat', { kind: 'socialchat', assumption: null }],
  ['webchat', { kind: 'webchat', assumption: null }],
  ['web', { kind: 'webchat', assumption: null }],
  ['widget', { kind: 'webchat', assumption: null }],
  ['web_chat', { kind: 'webchat', assumption: null }],
  ['web-chat', { kind: 'webchat', assumption: null }],
]);

/** The built-in kind for a raw engine name; null for an engine we do not know. */
export function defaultChannelKind(rawEngine: string | null): DefaultChannelKind | null {
  if (rawEngine === null) return null;
  return DEFAULTS.get(rawEngine.trim().toLowerCase()) ?? null;
}

/**
 * The warning logged once per channel whose kind is a WhatsApp assumption (no `channels:` entry):
 * what was assumed and the exact YAML line that states the other reading.
 */
export function unmappedChannelAdvice(
  channel: { id: string | null; name: string | null; engine: string; rawEngine?: string | null | undefined },
  assumed: DefaultChannelKind,
): string {
  const engine = channel.rawEngine ?? channel.engine;
  const other = assumed.kind === 'whatsapp_qr' ? 'whatsapp_api' : 'whatsapp_qr';
  const what = other === 'whatsapp_qr' ? 'a QR-linked number (no reply window)' : 'a business API number';
  const match =
    channel.id !== null
      ? `engine: ${engine}, channel_id: ${JSON.stringify(channel.id)}`
      : `engine: ${engine}`;
  const where = channel.id !== null ? `channel ${JSON.stringify(channel.id)}` : `a channel without id`;
  return (
    `${where} (engine "${engine}") has no channels: entry; ${assumed.assumption ?? `treated as ${assumed.kind}`}. ` +
    `If it is ${what}, add under channels: - { match: { ${match} }, kind: ${other} } ` +
    `(or kind: ${assumed.kind} to confirm the default and silence this warning)`
  );
}
