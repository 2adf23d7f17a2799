import { describe, expect, it } from 'vitest';
import { parseMetadata, parseSentAt } from '../../../src/platform/message-schemas.js';

describe('parseSentAt', () => {
  it.each([
    ['2026-11-21 07:00:00', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21 00:30:00', '2026-11-20T17:30:00.000Z'],
    ['2026-11-21T00:00:00Z', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21T07:00:00+07:00', '2026-11-21T00:00:00.000Z'],
    [1795219200, '2026-11-21T00:00:00.000Z'],
    ['1795219200', '2026-11-21T00:00:00.000Z'],
    [1795219200000, '2026-11-21T00:00:00.000Z'],
  ])('%j -> %s', (value, iso) => {
    expect(parseSentAt(value)?.toISOString()).toBe(iso);
  });

  it.each(['', 'kemarin', '2026-02-30 10:00:00', '21/11/2026 07:00', '0'])('rejects %j', (value) => {
    expect(parseSentAt(value)).toBeUndefined();
  });
});

describe('parseMetadata', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['{broken', null],
    ['"str"', null],
    [' ', null],
    [null, null],
    [7, null],
    [{ b: 2 }, { b: 2 }],
  ])('%j -> %j', (value, expected) => {
    expect(parseMetadata(value)).toEqual(expected);
  });
});
