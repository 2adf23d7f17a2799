import { parseWib } from '../../base/wib-time.js';

/**
 * Reads the payload's event time, in any form seen (webhook-payloads.md §2): Unix seconds,
 * milliseconds, either as a numeric string, ISO-8601 with a zone, or WIB `YYYY-MM-DD HH:MM:SS`.
 * Returns undefined when it is none of those; the caller then falls back to the receive time
 * instead of rejecting the event (a bad clock on the sender is no reason to lose a message).
 */
export function parseEventTime(value: unknown): Date | undefined {
  if (typeof value === 'number') return fromEpochNumber(value);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) return fromEpochNumber(Number(text));
  const wib = parseWib(text);
  if (wib) return inRange(wib);
  // Only ISO strings that carry a zone; a zone-less one was taken as WIB above, other formats
  // (RFC 2822, "yesterday") are not something the platform sends, so they fall back.
  const iso = ISO_WITH_ZONE.exec(text);
  if (iso) {
    // V8 rolls a day past the end of its month over (2024-02-30 -> 2024-03-01); parseWib refuses
    // such dates, and so does this, so that a date that does not exist falls back in either form.
    if (!isCalendarDate(Number(iso[1]), Number(iso[2]), Number(iso[3]))) return undefined;
    return inRange(new Date(text));
  }
  return undefined;
}

const ISO_WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDate(year: number, month: number, day: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/**
 * Magnitude tells the unit: below 1e11 seconds (until year 5138), below 1e14 milliseconds, below
 * 1e17 microseconds. No real event time is ambiguous between them.
 */
const SECONDS_LIMIT = 1e11;
const MILLISECONDS_LIMIT = 1e14;
const MICROSECONDS_LIMIT = 1e17;
/** The canonical event carries ISO strings with four-digit years; later instants are not real. */
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function fromEpochNumber(n: number): Date | undefined {
  if (!Number.isFinite(n) || n <= 0 || n >= MICROSECONDS_LIMIT) return undefined;
  const ms = n < SECONDS_LIMIT ? n * 1000 : n < MILLISECONDS_LIMIT ? n : n / 1000;
  return inRange(new Date(Math.round(ms)));
}

function inRange(date: Date): Date | undefined {
  const ms = date.getTime();
  return Number.isFinite(ms) && ms > 0 && ms <= MAX_MS ? date : undefined;
}
