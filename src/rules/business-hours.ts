/**
 * Business hours in the configured time zone: weekly ranges (possibly across midnight) and
 * holidays that are closed all day. Pure: the clock and the zone are arguments.
 */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
const WEEKDAY_LABEL = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

const MINUTES_PER_DAY = 24 * 60;

/** Minutes from local midnight; `end` is above 1440 when the range runs past midnight. */
export interface OpeningRange {
  start: number;
  end: number;
  text: string;
}

export interface BusinessHours {
  timezone: string;
  /** Index 0 = Sunday, as `Date#getDay`. */
  weekly: readonly (readonly OpeningRange[])[];
  holidays: ReadonlySet<string>;
}

export interface BusinessHoursState {
  open: boolean;
  /** "Mon 10:02 Asia/Jakarta", "holiday 2026-12-25 (Fri 10:02 Asia/Jakarta)". */
  label: string;
}

/** Day indexes of `mon`, `mon-fri` or `fri-mon` (wraps past Sunday); undefined when not a day key. */
export function parseDayKey(key: string): number[] | undefined {
  const parts = key.trim().toLowerCase().split('-');
  const index = (day: string | undefined) => WEEKDAYS.indexOf(day as Weekday);
  if (parts.length === 1) {
    const day = index(parts[0]);
    return day === -1 ? undefined : [day];
  }
  if (parts.length !== 2) return undefined;
  const from = index(parts[0]);
  const to = index(parts[1]);
  if (from === -1 || to === -1) return undefined;
  const days: number[] = [];
  for (let d = from; ; d = (d + 1) % 7) {
    days.push(d);
    if (d === to || days.length === 7) break;
  }
  return days;
}

const RANGE_PATTERN = /^(\d{2}):(\d{2})\s*-\s*(\d{2}):(\d{2})$/;

/** Parses `"08:00-17:00"` or `"22:00-02:00"`; returns an error text when it is not a valid range. */
export function parseOpeningRange(text: string): OpeningRange | string {
  const m = RANGE_PATTERN.exec(text.trim());
  if (!m) return `"${text}" is not a range: write "HH:MM-HH:MM", e.g. "08:00-17:00" or "22:00-02:00"`;
  const [, h1, m1, h2, m2] = m.map(Number) as [number, number, number, number, number];
  const start = h1 * 60 + m1;
  let end = h2 * 60 + m2;
  if (h1 > 23 || m1 > 59 || m2 > 59 || h2 > 24 || (h2 === 24 && m2 !== 0)) {
    return `"${text}" has a time that does not exist: hours are 00-23 (24:00 only as an end), minutes 00-59`;
  }
  if (start === end) return `"${text}" is empty: start and end are the same time`;
  if (end < start) end += MINUTES_PER_DAY;
  return { start, end, text: text.trim() };
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isIsoDate(text: string): boolean {
  const m = DATE_PATTERN.exec(text);
  if (!m) return false;
  const [, y, mo, d] = m.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * Zones `Intl` accepted: building a DateTimeFormat to ask took a tenth of loading a config of 200
 * businesses (each validates its timezone). Only valid names are kept, so the set is bounded by
 * the IANA list.
 */
const validZones = new Set<string>();

/** True when `Intl` knows the IANA zone name. */
export function isValidTimeZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    validZones.add(zone);
    return true;
  } catch {
    return false;
  }
}

/** Builds the weekly table from already validated config values. */
export function compileBusinessHours(
  weekly: Readonly<Record<string, string | readonly string[]>>,
  holidays: readonly string[],
  timezone: string,
): BusinessHours {
  const table: OpeningRange[][] = [[], [], [], [], [], [], []];
  for (const [key, value] of Object.entries(weekly)) {
    const days = parseDayKey(key) ?? [];
    const ranges = (typeof value === 'string' ? [value] : value)
      .map(parseOpeningRange)
      .filter((r): r is OpeningRange => typeof r !== 'string');
    for (const day of days) table[day]?.push(...ranges);
  }
  return { timezone, weekly: table, holidays: new Set(holidays) };
}

interface LocalTime {
  date: string;
  previousDate: string;
  weekday: number;
  minute: number;
  label: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** Wall-clock date, weekday and minute of `now` in `timezone`. */
export function localTime(now: Date, timezone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const part of formatterFor(timezone).formatToParts(now)) parts[part.type] = part.value;
  const y = Number(parts.year);
  const mo = Number(parts.month);
  const d = Number(parts.day);
  const hour = Number(parts.hour) % 24;
  const minute = Number(parts.minute);
  const day = new Date(Date.UTC(y, mo - 1, d));
  const previous = new Date(Date.UTC(y, mo - 1, d - 1));
  const weekday = day.getUTCDay();
  const pad = (n: number) => String(n).padStart(2, '0');
  return {
    date: day.toISOString().slice(0, 10),
    previousDate: previous.toISOString().slice(0, 10),
    weekday,
    minute: hour * 60 + minute,
    label: `${WEEKDAY_LABEL[weekday]} ${pad(hour)}:${pad(minute)} ${timezone}`,
  };
}

/**
 * Open or closed at `now`. A range that crosses midnight belongs to the day it starts on, so
 * Friday's "22:00-02:00" is open at Saturday 01:00; a holiday is closed all day, and a range
 * that started on a holiday does not run into the next day either.
 */
export function businessHoursAt(hours: BusinessHours, now: Date): BusinessHoursState {
  const local = localTime(now, hours.timezone);
  if (hours.holidays.has(local.date)) {
    return { open: false, label: `holiday ${local.date}, ${local.label}` };
  }
  const today = hours.weekly[local.weekday] ?? [];
  if (today.some((r) => local.minute >= r.start && local.minute < Math.min(r.end, MINUTES_PER_DAY))) {
    return { open: true, label: local.label };
  }
  if (!hours.holidays.has(local.previousDate)) {
    const yesterday = hours.weekly[(local.weekday + 6) % 7] ?? [];
    if (yesterday.some((r) => r.end > MINUTES_PER_DAY && local.minute < r.end - MINUTES_PER_DAY)) {
      return { open: true, label: local.label };
    }
  }
  return { open: false, label: local.label };
}
