import { describe, expect, it } from 'vitest';
import { formatWib, parseWib } from '../../../src/base/wib-time.js';

describe('parseWib', () => {
  it.each([
    ['2026-11-21 07:00:00', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21 00:30:00', '2026-11-20T17:30:00.000Z'],
    ['2026-01-01 06:59:59', '2025-12-31T23:59:59.000Z'],
    ['2026-11-21T07:00:00', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21 07:00:00.250', '2026-11-21T00:00:00.250Z'],
  ])('reads %s as %s', (wib, iso) => {
    expect(parseWib(wib)?.toISOString()).toBe(iso);
  });

  it.each(['', '2026-11-21', '2026-02-30 10:00:00', '2026-11-21 25:00:00', 'yesterday', '1732150800'])(
    'rejects %j',
    (value) => {
      expect(parseWib(value)).toBeUndefined();
    },
  );

  it('round-trips through formatWib', () => {
    const instant = new Date('2026-11-21T16:59:58.000Z');
    expect(formatWib(instant)).toBe('2026-11-21 23:59:58');
    expect(parseWib(formatWib(instant))?.getTime()).toBe(instant.getTime());
  });
});
