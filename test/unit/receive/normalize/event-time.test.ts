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
