import { describe, expect, it } from 'vitest';
import {
  businessHoursAt,
  compileBusinessHours,
  parseDayKey,
  parseOpeningRange,
} from '../../../src/rules/business-hours.js';

// Asia/Jakarta is UTC+7 all year; instants below are written in UTC.
const example = compileBusinessHours(
  { 'mon-fri': '08:00-17:00', sat: '09:00-13:00' },
  ['2026-12-25'],
  'Asia/Jakarta',
);
const night = compileBusinessHours(
  { 'mon-fri': ['08:00-12:00', '22:00-02:00'] },
  ['2026-12-25'],
  'Asia/Jakarta',
);

describe('business hours in Asia/Jakarta', () => {
  it.each([
    ['2026-11-23T01:00:00Z', true, 'Mon 08:00 Asia/Jakarta'],
    ['2026-11-23T00:59:00Z', false, 'Mon 07:59 Asia/Jakarta'],
    ['2026-11-23T09:59:00Z', true, 'Mon 16:59 Asia/Jakarta'],
    ['2026-11-23T10:00:00Z', false, 'Mon 17:00 Asia/Jakarta'],
    ['2026-11-28T05:59:00Z', true, 'Sat 12:59 Asia/Jakarta'],
    ['2026-11-28T06:00:00Z', false, 'Sat 13:00 Asia/Jakarta'],
    ['2026-11-29T03:00:00Z', false, 'Sun 10:00 Asia/Jakarta'],
    ['2026-12-25T03:00:00Z', false, 'holiday 2026-12-25, Fri 10:00 Asia/Jakarta'],
    ['2026-12-24T16:59:00Z', false, 'Thu 23:59 Asia/Jakarta'],
    ['2026-12-26T02:00:00Z', true, 'Sat 09:00 Asia/Jakarta'],
    // 2026-11-22T18:00Z is already Monday 01:00 in Jakarta (the UTC date is still Sunday).
    ['2026-11-22T18:00:00Z', false, 'Mon 01:00 Asia/Jakarta'],
  ])('%s is open=%s (%s)', (iso, open, label) => {
    expect(businessHoursAt(example, new Date(iso))).toEqual({ open, label });
  });

  it.each([
    ['2026-11-23T15:00:00Z', true, 'Mon 22:00 opens the night range'],
    ['2026-11-23T18:59:00Z', true, 'Tue 01:59, still in Monday night'],
    ['2026-11-23T19:00:00Z', false, 'Tue 02:00, the night range ended'],
    ['2026-11-27T18:30:00Z', true, "Sat 01:30, Friday night's range runs into the weekend"],
    ['2026-11-28T15:30:00Z', false, 'Sat 22:30, no range on Saturday'],
    ['2026-11-29T18:30:00Z', false, 'Mon 01:30, Sunday had no night range'],
    ['2026-12-25T15:30:00Z', false, 'Fri 22:30 on a holiday'],
    ['2026-12-25T18:30:00Z', false, 'Sat 01:30, the range started on the holiday'],
    ['2026-12-24T18:30:00Z', false, 'Fri 01:30, the holiday itself is closed all day'],
  ])('"22:00-02:00": %s is open=%s (%s)', (iso, open) => {
    expect(businessHoursAt(night, new Date(iso)).open).toBe(open);
  });

  it('reads other zones too', () => {
    const ny = compileBusinessHours({ 'mon-fri': '09:00-17:00' }, [], 'America/New_York');
    expect(businessHoursAt(ny, new Date('2026-07-06T13:30:00Z'))).toEqual({
      open: true,
      label: 'Mon 09:30 America/New_York',
    });
  });
});

describe('parsing', () => {
  it.each([
    ['mon', [1]],
    ['mon-fri', [1, 2, 3, 4, 5]],
    ['fri-mon', [5, 6, 0, 1]],
    ['SUN', [0]],
  ])('day key %s', (key, days) => {
    expect(parseDayKey(key)).toEqual(days);
  });

  it.each(['funday', 'mon-', 'mon-tue-wed', ''])('%j is not a day key', (key) => {
    expect(parseDayKey(key)).toBeUndefined();
  });

  it.each([
    ['08:00-17:00', { start: 480, end: 1020, text: '08:00-17:00' }],
    ['22:00-02:00', { start: 1320, end: 1560, text: '22:00-02:00' }],
    ['00:00-24:00', { start: 0, end: 1440, text: '00:00-24:00' }],
  ])('range %s', (text, range) => {
    expect(parseOpeningRange(text)).toEqual(range);
  });

  it.each([
    ['8-17', '"8-17" is not a range: write "HH:MM-HH:MM", e.g. "08:00-17:00" or "22:00-02:00"'],
    [
      '10:00-25:00',
      '"10:00-25:00" has a time that does not exist: hours are 00-23 (24:00 only as an end), minutes 00-59',
    ],
    [
      '10:60-11:00',
      '"10:60-11:00" has a time that does not exist: hours are 00-23 (24:00 only as an end), minutes 00-59',
    ],
    ['12:00-12:00', '"12:00-12:00" is empty: start and end are the same time'],
  ])('%s is rejected', (text, message) => {
    expect(parseOpeningRange(text)).toBe(message);
  });
});
