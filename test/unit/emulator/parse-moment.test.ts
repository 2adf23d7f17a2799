import { describe, expect, it } from 'vitest';
import { parseMoment } from '../../../src/emulator/parse-moment.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');

describe('parseMoment', () => {
  it.each([
    [1_700_000_000_000, 1_700_000_000_000],
    ['25h', NOW - 25 * 3_600_000],
    ['90m', NOW - 90 * 60_000],
    ['1.5d', NOW - 36 * 3_600_000],
    ['30 s', NOW - 30_000],
    ['2026-03-10T05:00:00Z', Date.parse('2026-03-10T05:00:00Z')],
    ['2026-03-10T12:00:00+07:00', Date.parse('2026-03-10T05:00:00Z')],
    ['2026-03-10 12:00:00', Date.parse('2026-03-10T05:00:00Z')],
    // Without a zone, a time is WIB wall-clock time (like the platform's own timestamps).
    ['2026-03-10T12:00:00', Date.parse('2026-03-10T05:00:00Z')],
  ])('%j', (value, expected) => {
    expect(parseMoment(value, NOW)).toBe(expected);
  });

  it.each([['yesterday'], ['-5h'], [Number.NaN], [-1], ['']])('rejects %j', (value) => {
    expect(parseMoment(value, NOW)).toBeUndefined();
  });
});
