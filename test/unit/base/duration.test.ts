import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, parseSize } from '../../../src/base/duration.js';

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['15m', 900_000],
    ['12h', 43_200_000],
    ['7d', 604_800_000],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '15', '1.5s', '15 m', '15min', '-5s', 'h', '99999999999999999999d'])(
    '%j is not a duration',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it.each([
    [0, '0s'],
    [250, '250ms'],
    [45_000, '45s'],
    [200_000, '3m 20s'],
    [180_000, '3m'],
    [3_600_000, '1h'],
    [(25 * 60 + 3) * 60_000, '25h 3m'],
    [-5, '0s'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([
    ['1mb', 1_048_576],
    ['512kb', 524_288],
    ['10b', 10],
    ['1MB', 1_048_576],
  ])('size %s is %d bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it.each(['1', '1 mb', '1.5mb', 'lots'])('%j is not a size', (text) => {
    expect(parseSize(text)).toBeUndefined();
  });
});
