import { maskPersonalData } from '../base/personal-data.js';

/**
 * A platform's error text as the bridge may quote it. Error messages end up in logs,
 * trace status, dead letters and the ledger, and a platform may echo what it was sent ("message
 * 'Halo Siti, ...' is too long"): every stretch of at least ECHO_MIN characters that also occurs in
 * a text we sent is cut out (`[…]`), then e-mail addresses, card numbers, NIKs and phone numbers are
 * masked. What is left is the platform's own words (`Data tidak valid`, `conversation not found`),
 * which an operator needs.
 */
const ECHO_MIN = 8;
export const CUT = '[…]';

/** Keys of a request body that hold no customer data (ids and media types); the rest may. */
const NOT_TEXT = new Set(['conversation_id', 'reply_to_message_id', 'type', 'mime_type', 'mimetype']);

/** The strings of a request body that may hold what customers wrote or are called. */
export function sentTexts(json: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  const walk = (value: unknown, key: string | undefined, depth: number) => {
    if (typeof value === 'string') {
      if (key === undefined || !NOT_TEXT.has(key)) out.push(value);
    } else if (value !== null && typeof value === 'object' && depth < 4) {
      for (const [k, v] of Object.entries(value)) walk(v, Array.isArray(value) ? key : k, depth + 1);
    }
  };
  walk(json, undefined, 0);
  return out;
}

const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The longest stretch `text` shares with `sent`: [start in text, length]. */
function longestShared(text: string, sent: string): [number, number] {
  let best: [number, number] = [0, 0];
  let previous = new Uint16Array(sent.length + 1);
  let current = new Uint16Array(sent.length + 1);
  for (let i = 1; i <= text.length; i += 1) {
    for (let j = 1; j <= sent.length; j += 1) {
      const run = text.charCodeAt(i - 1) === sent.charCodeAt(j - 1) ? (previous[j - 1] ?? 0) + 1 : 0;
      current[j] = run;
      if (run > best[1]) best = [i - run, run];
    }
    [previous, current] = [current, previous];
  }
  return best;
}

const WORD = /[\p{L}\p{N}_]/u;

/** A short sent text (a name: `Siti`) is cut where it stands as a word of its own, not inside others. */
function cutWholeWords(text: string, word: string): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    if (at < from) continue;
    const end = at + word.length;
    if (WORD.test(text.charAt(at - 1)) || WORD.test(text.charAt(end))) continue;
    out += text.slice(from, at) + CUT;
    from = end;
  }
  return out + text.slice(from);
}

/** `text` with every stretch it shares with one of `sent` cut out, and personal data masked. */
export function quotePlatformText(text: string, sent: readonly string[]): string {
  let out = text;
  for (const raw of sent) {
    const echo = flat(raw);
    if (echo === '') continue;
    if (echo.length < ECHO_MIN) {
      out = cutWholeWords(out, echo);
      continue;
    }
    for (let cuts = 0; cuts < 20; cuts += 1) {
      const [start, length] = longestShared(out, echo);
      if (length < ECHO_MIN) break;
      out = `${out.slice(0, start)}${CUT}${out.slice(start + length)}`;
    }
  }
  return maskPersonalData(out);
}
