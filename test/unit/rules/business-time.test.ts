import { describe, expect, it } from 'vitest';
import { compileBusinessHours } from '../../../src/rules/business-hours.js';
import { addBusinessTime, formatLocal, localMinuteToInstant } from '../../../src/rules/business-time.js';

// Asia/Jakarta is UTC+7 all year; instants are written with their offset to read as local time.
const office = compileBusinessHours(
  { 'mon-fri': '08:00-17:00', sat: '09:00-13:00' },
  ['2026-12-25'],
  'Asia/Jakarta',
);
const split = compileBusinessHours({ 'mon-fri': ['08:00-12:00', '13:00-17:00'] }, [], 'Asia/Jakarta');
const night = compileBusinessHours({ 'mon-fri': '22:00-02:00' }, ['2026-11-28'], 'Asia/Jakarta');

const at = (local: string) => new Date(`${local}+07:00`);
const due = (hours: typeof office, start: string, minutes: number) =>
  addBusinessTime(hours, at(start), minutes * 60_000)?.toISOString();

describe('addBusinessTime', () => {
  it.each([
    // A Friday-evening start: 10 minutes left on Friday, the rest on Saturday morning.
    ['Friday 16:50 + 30m runs into Saturday 09:20', office, '2026-11-27T16:50:00', 30, '2026-11-28T09:20:00'],
    [
      'Friday 17:30 (closed) + 30m is Saturday 09:30',
      office,
      '2026-11-27T17:30:00',
      30,
      '2026-11-28T09:30:00',
    ],
    [
      'Saturday 12:50 + 30m skips Sunday: Monday 08:20',
      office,
      '2026-11-28T12:50:00',
      30,
      '2026-11-30T08:20:00',
    ],
    // A holiday (Friday 2026-12-25) is closed all day.
    [
      'Thursday before a holiday 16:45 + 30m is Saturday 09:15',
      office,
      '2026-12-24T16:45:00',
      30,
      '2026-12-26T09:15:00',
    ],
    ['on the holiday itself + 1m is Saturday 09:01', office, '2026-12-25T10:00:00', 1, '2026-12-26T09:01:00'],
    // A split shift: the lunch break does not count.
    ['11:50 + 30m in a split shift is 13:20', split, '2026-11-23T11:50:00', 30, '2026-11-23T13:20:00'],
    ['12:30 (break) + 30m is 13:30', split, '2026-11-23T12:30:00', 30, '2026-11-23T13:30:00'],
    [
      'Friday 16:40 + 8h in a split shift is Monday 16:40',
      split,
      '2026-11-27T16:40:00',
      480,
      '2026-11-30T16:40:00',
    ],
    // A past-midnight range belongs to the day it starts on.
    [
      'Monday 23:30 + 60m crosses midnight: Tuesday 00:30',
      night,
      '2026-11-23T23:30:00',
      60,
      '2026-11-24T00:30:00',
    ],
    [
      'Tuesday 01:00 (in Monday night) + 90m: 1h left, then Tuesday 22:30',
      night,
      '2026-11-24T01:00:00',
      90,
      '2026-11-24T22:30:00',
    ],
    [
      'Friday 23:00 + 3h before a Saturday holiday: 1h to midnight, 2h from Monday 22:00',
      night,
      '2026-11-27T23:00:00',
      180,
      '2026-12-01T00:00:00',
    ],
    ['at the exact opening + 0m is that instant', office, '2026-11-23T08:00:00', 0, '2026-11-23T08:00:00'],
    [
      '17:00 sharp is closed: + 1m is the next morning 08:01',
      office,
      '2026-11-23T17:00:00',
      1,
      '2026-11-24T08:01:00',
    ],
  ])('%s', (_, hours, start, minutes, expected) => {
    expect(due(hours, start, minutes)).toBe(at(expected).toISOString());
  });

  it('a holiday cuts the night range of the day before at midnight', () => {
    // Friday 2026-11-27 22:00-02:00 runs into Saturday 2026-11-28, a holiday in `night`.
    expect(due(night, '2026-11-27T23:30:00', 60)).toBe(at('2026-11-30T22:30:00').toISOString());
  });

  it('counts seconds, not whole minutes', () => {
    const result = addBusinessTime(office, at('2026-11-27T16:59:50'), 30_000);
    expect(result?.toISOString()).toBe(at('2026-11-28T09:00:20').toISOString());
  });

  it('is null when the hours never open', () => {
    const closed = compileBusinessHours({}, [], 'Asia/Jakarta');
    expect(addBusinessTime(closed, at('2026-11-27T10:00:00'), 60_000)).toBeNull();
  });

  it('follows a zone with daylight saving time (Europe/Berlin, 2026-03-29)', () => {
    const berlin = compileBusinessHours({ 'mon-sun': '01:00-04:00' }, [], 'Europe/Berlin');
    // 02:00-03:00 does not exist that night: the range is 2 hours long, not 3.
    expect(addBusinessTime(berlin, new Date('2026-03-29T00:00:00Z'), 150 * 60_000)?.toISOString()).toBe(
      // 01:00 CET = 00:00Z; 2h of the night, then 30m from 01:00 CEST of 03-30 (= 23:00Z 03-29).
      '2026-03-29T23:30:00.000Z',
    );
    expect(localMinuteToInstant('2026-03-29', 4 * 60, 'Europe/Berlin')).toBe(
      Date.parse('2026-03-29T02:00:00Z'),
    );
  });

  it('formats a due time in local time', () => {
    expect(formatLocal(at('2026-11-30T08:20:00'), 'Asia/Jakarta')).toBe('Mon 2026-11-30 08:20 Asia/Jakarta');
  });
});

describe('addBusinessTime edges', () => {
  it('returns the start itself for no time or a negative time, even while closed', () => {
    expect(due(office, '2026-11-29T10:00:00', 0)).toBe(at('2026-11-29T10:00:00').toISOString());
    expect(due(office, '2026-11-23T10:00:00', -5)).toBe(at('2026-11-23T10:00:00').toISOString());
  });

  it('ends at the closing minute when the time left fills the range exactly', () => {
    expect(due(office, '2026-11-23T16:50:00', 10)).toBe(at('2026-11-23T17:00:00').toISOString());
    expect(due(split, '2026-11-23T11:30:00', 30)).toBe(at('2026-11-23T12:00:00').toISOString());
  });

  it('counts a whole day of ranges in order, a later range of the table first or not', () => {
    const reversed = compileBusinessHours({ 'mon-fri': ['13:00-17:00', '08:00-12:00'] }, [], 'Asia/Jakarta');
    expect(due(reversed, '2026-11-23T07:00:00', 300)).toBe(at('2026-11-23T14:00:00').toISOString());
  });
});

describe('localMinuteToInstant across daylight saving changes (Europe/Berlin)', () => {
  it.each([
    // Spring: 01:30 is still CET (+1) although the guess from its wall time falls after the change.
    ['2026-03-29', 90, '2026-03-29T00:30:00Z'],
    ['2026-03-29', 3 * 60 + 30, '2026-03-29T01:30:00Z'],
    // Autumn: 03:30 is CET again.
    ['2026-10-25', 3 * 60 + 30, '2026-10-25T02:30:00Z'],
    ['2026-10-25', 60, '2026-10-24T23:00:00Z'],
    // A minute past the day's end runs into the next day.
    ['2026-07-01', 24 * 60 + 30, '2026-07-01T22:30:00Z'],
  ])('%s minute %i is %s', (date, minute, iso) => {
    expect(localMinuteToInstant(date, minute, 'Europe/Berlin')).toBe(Date.parse(iso));
  });
});
