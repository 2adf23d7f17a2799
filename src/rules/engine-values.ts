import { editDistance } from '../base/edit-distance.js';
import { ENGINE_ALIASES } from '../events/channel-engine.js';
import { KNOWN_ENGINES } from '../events/conversation-event.js';

/**
 * The values `engine:` may take in a rule condition or a `channels[].match`:
 * the canonical names events carry after normalisation, and the platform's own spellings from
 * webhook-payloads.md §2 (`wa`, `waba`, `ig`, `fb`, `messenger`...). A value outside both lists
 * would validate and then never match, so it is refused with the list.
 */
export const CANONICAL_ENGINES: readonly string[] = KNOWN_ENGINES;
export const PLATFORM_ENGINE_NAMES: readonly string[] = [...ENGINE_ALIASES.keys()]
  .filter((name) => !CANONICAL_ENGINES.includes(name))
  .sort();

/**
 * What an engine value matches on an event: itself (the raw name as the platform gave it, `channel.rawEngine`) and
 * the canonical engine it stands for (`messenger` matches events whose engine is `facebook`).
 */
export function engineMatchValues(value: string): string[] {
  const key = value.trim().toLowerCase();
  const canonical = ENGINE_ALIASES.get(key);
  // WhatsApp's spellings tell API (`waba`) from QR (`wa`) numbers: they match the raw engine only,
  // never every WhatsApp channel (`whatsapp` does that).
  if (canonical === 'whatsapp') return [key];
  return canonical === undefined || canonical === key ? [key] : [key, canonical];
}

/** Null when the value is a known engine; else the message to show, with a near miss. */
export function engineValueProblem(value: string): string | null {
  const key = value.trim().toLowerCase();
  if (CANONICAL_ENGINES.includes(key) || ENGINE_ALIASES.has(key)) return null;
  const near = [...CANONICAL_ENGINES, ...PLATFORM_ENGINE_NAMES].find(
    (known) => editDistance(key, known) <= 2,
  );
  return `"${value}" is not an engine the platform sends${near ? `: did you mean "${near}"?` : ''}; use one of ${CANONICAL_ENGINES.join(', ')}, or the platform's names ${PLATFORM_ENGINE_NAMES.join(', ')} (for other channels match channel_id or channel_name)`;
}
