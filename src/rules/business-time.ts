import { type BusinessHours, localTime } from './business-hours.js';

/**
 * Timers in business time (`after: 30m, clock: business`): the instant at which `ms` of
 * OPEN business time have passed since `start`. Pure arithmetic over the weekly table, the holidays
 * and the time zone, with the same reading as businessHoursAt: a range that crosses midnight
 * belongs to the day it starts on, a holiday is closed all day (also for the tail of the previous
 * day's past-midnight range), split shifts are simply several ranges of one day.
 */

const MINUTE_MS = 60_000;
/** Two years of calendar: a table whose holidays close more than that never opens. */
const MAX_DAYS = 2 * 366;

/** Zone offset (ms, local minus UTC) at an instant, to the minute. */
function zoneOffsetMs(instant: number, timezone: string): number {
  const floored = Math.floor(instant / MINUTE_MS) * MINUTE_MS;
  const local = localTime(new Date(floored), timezone);
  const [y, mo, d] = local.date.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, mo - 1, d) + local.minute * MINUTE_MS - floored;
}

/** The UTC instant of a local wall-clock minute (`minute` may exceed a day: it runs into the next). */
export function localMinuteToInstant(date: string, minute: number, timezone: string): number {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, mo - 1, d) + minute * MINUTE_MS;
  // Two passes find the offset valid at the result (a DST change between the guess and it).
  let instant = wall - zoneOffsetMs(wall, timezone);
  instant = wall - zoneOffsetMs(instant, timezone);
  return instant;
}

function shiftDate(date: string, days: number): string {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, mo - 1, d + days)).toISOString().slice(0, 10);
}

/** Open intervals [from, to) in ms of the ranges that start on a local date. */
function openIntervals(hours: BusinessHours, date: string): [number, number][] {
  if (hours.holidays.has(date)) return [];
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const weekday = new Date(Date.UTC(y, mo - 1, d)).getUTCDay();
  const nextIsHoliday = hours.holidays.has(shiftDate(date, 1));
  return (hours.weekly[weekday] ?? [])
    .map((range): [number, number] => {
      const end = nextIsHoliday ? Math.min(range.end, 24 * 60) : range.end;
      return [
        localMinuteToInstant(date, range.start, hours.timezone),
        localMinuteToInstant(date, end, hours.timezone),
      ];
    })
    .sort((a, b) => a[0] - b[0]);
}

/**
 * The instant `ms` of open business time after `start` (start itself when `ms` is 0 or less); null
 * when the hours never open in the next two years (no ranges, or holidays everywhere).
 */
export function addBusinessTime(hours: BusinessHours, start: Date, ms: number): Date | null {
  let remaining = Math.max(0, ms);
  let cursor = start.getTime();
  if (remaining === 0) return new Date(cursor);
  // From the day before: its past-midnight range may still be open at `start`.
  let date = shiftDate(localTime(start, hours.timezone).date, -1);
  for (let day = 0; day < MAX_DAYS; day++, date = shiftDate(date, 1)) {
    for (const [from, to] of openIntervals(hours, date)) {
      if (to <= cursor) continue;
      const begin = Math.max(from, cursor);
      if (remaining <= to - begin) return new Date(begin + remaining);
      remaining -= to - begin;
      cursor = to;
    }
  }
  return null;
}

/** "Mon 2026-11-23 08:30 Asia/Jakarta": a due time as the team reads it. */
export function formatLocal(instant: Date, timezone: string): string {
  const local = localTime(instant, timezone);
  const [weekday, clock] = local.label.split(' ');
  return `${weekday} ${local.date} ${clock} ${timezone}`;
}
