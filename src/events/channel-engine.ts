/**
 * Engine spellings seen in webhooks (webhook-payloads.md §2: `wa`, `whatsapp`, `waba`, `ig`, `fb`,
 * `webchat`...) mapped onto the names the rules use (KNOWN_ENGINES in conversation-event.ts).
 */
export const ENGINE_ALIASES: ReadonlyMap<string, string> = new Map([
  ['wa', 'whatsapp'],
  ['whatsapp', 'whatsapp'],
  ['waba', 'whatsapp'],
  ['whatsapp_business', 'whatsapp'],
  ['whatsapp-business', 'whatsapp'],
  ['ig', 'instagram'],
  ['instagram', 'instagram'],
  ['fb', 'facebook'],
  ['facebook', 'facebook'],
  ['messenger', 'facebook'],
  ['webchat', 'webchat'],
  ['web', 'webchat'],
  ['widget', 'webchat'],
  ['web_chat', 'webchat'],
  ['web-chat', 'webchat'],
  ['telegram', 'telegram'],
  ['tg', 'telegram'],
  ['slack', 'slack'],
  ['intercom', 'intercom'],
  ['socialchat', 'socialchat'],
  ['social_chat', 'socialchat'],
]);

/** A known engine name, or the given one trimmed and lower-cased, or 'unknown' when there is none. */
export function normalizeEngine(raw: string | null): string {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return 'unknown';
  return ENGINE_ALIASES.get(value) ?? value;
}

/** The engine as the platform wrote it, trimmed and lower-cased; null when none was given. */
export function rawEngineName(raw: string | null): string | null {
  const value = (raw ?? '').trim().toLowerCase();
  return value === '' ? null : value;
}
