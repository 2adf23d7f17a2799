import { describe, expect, it } from 'vitest';
import { parseEventTime } from '../../../../src/receive/normalize/event-time.js';

describe('parseEventTime: dates that do not exist fall back in every form', () => {
  // Found by test/hostile (timestamps property): ISO strings with a zone were read by `new Date`,
  // which rolls 2024-02-30 over to 2024-03-01, while the same date in the WIB form was refused.
  it.each([
    ['2024-02-30T10:00:00Z'],
    ['2023-02-29T10:00:00+07:00'],
    ['2024-04-31T00:00Z'],
    ['2100-02-29T12:00:00-03:30'],
    ['2024-06-31T08:15:00+0700'],
    ['2024-13-01T10:00:00Z'],
    ['2024-00-10T10:00:00Z'],
    ['2024-01-00T10:00:00Z'],
    ['2024-02-30 10:00:00'],
  ])('%s is no instant', (text) => {
    expect(parseEventTime(text)).toBeUndefined();
  });

  it.each([
    ['2024-02-29T10:00:00Z', '2024-02-29T10:00:00.000Z'],
    ['2000-02-29T07:00:00+07:00', '2000-02-29T00:00:00.000Z'],
    ['2024-04-30T23:59:59.5-01:00', '2024-05-01T00:59:59.500Z'],
    ['2025-01-28T16:20:00+0700', '2025-01-28T09:20:00.000Z'],
    ['2024-02-29 07:00:00', '2024-02-29T00:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseEventTime(text)?.toISOString()).toBe(iso);
  });
});

describe('parseEventTime: the unit of a number is read from its size', () => {
  it.each([
    // The largest number read as seconds, and the smallest read as milliseconds.
    [99_999_999_999, '5138-11-16T09:46:39.000Z'],
    [100_000_000_000, '1973-03-03T09:46:40.000Z'],
    // The largest number read as milliseconds, and the smallest read as microseconds.
    [99_999_999_999_999, '5138-11-16T09:46:39.999Z'],
    [100_000_000_000_000, '1973-03-03T09:46:40.000Z'],
    ['1738056000.5', '2025-01-28T09:20:00.500Z'],
    ['  1738056000  ', '2025-01-28T09:20:00.000Z'],
  ])('%s is %s', (value, iso) => {
    expect(parseEventTime(value)?.toISOString()).toBe(iso);
  });

  it.each([
    ['zero', 0],
    ['a negative number', -1_738_056_000],
    ['a negative number as text', '-1738056000'],
    ['a number that rounds to the epoch', 0.0001],
    ['the epoch as an ISO string', '1970-01-01T00:00:00Z'],
    ['not a number', Number.NaN],
    ['infinity', Number.POSITIVE_INFINITY],
    ['an empty string', ''],
    ['blanks', '   '],
    ['a boolean', true],
    ['an ISO time without a zone that is no WIB time either', '2025-01-28T16:20'],
    ['past the last instant with four-digit years', '9999-12-31T23:59:59.999-01:00'],
  ])('%s is no instant', (_label, value) => {
    expect(parseEventTime(value)).toBeUndefined();
  });

  it('reads the last instant with a four-digit year', () => {
    expect(parseEventTime('9999-12-31T23:59:59.999Z')?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });
});

describe('parseEventTime: more digits and the first of a month', () => {
  it.each([
    ['1738056000.25', '2025-01-28T09:20:00.250Z'],
    ['2024-03-01T10:00:00Z', '2024-03-01T10:00:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseEventTime(text)?.toISOString()).toBe(iso);
  });
});
