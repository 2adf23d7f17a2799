import { describe, expect, it } from 'vitest';
import { FIRST_REPLY_BUCKETS_MS } from '../../../src/story/build-story-write.js';
import { StoryQueryError } from '../../../src/story/story-query-error.js';
import { decodeCursor, encodeCursor, isAfter, planSearch } from '../../../src/story/story-search.js';
import { histogramQuantile } from '../../../src/story/story-stats.js';
import { nameWords } from '../../../src/story/story-terms.js';

describe('planSearch', () => {
  it.each([
    ['+62 812-3456-7890', [['p:34567890']]],
    ['0812 3456 7890', [['p:34567890']]],
    ['BUDI@example.com', [['e:budi@example.com']]],
    ['Siti Aminah', [['n:siti', 'n:aminah']]],
    ['José', [['n:jose']]],
    ['x', []],
  ])('q %s', (q, alternatives) => {
    const plan = planSearch({ q });
    expect(plan.conversation).toBe(q);
    expect(plan.alternatives).toEqual(alternatives);
  });

  it('filters', () => {
    expect(planSearch({ tag: 'vip', rule: 'escalate', outcome: 'dead_letter' })).toEqual({
      conversation: null,
      alternatives: [],
      filters: ['t:vip', 'r:escalate', 'o:dead_letter'],
      tag: 'vip',
    });
  });
});

describe('cursors', () => {
  it('round trip, and order newest first then by id', () => {
    const cursor = decodeCursor(encodeCursor({ s: 10, c: 'b' }));
    expect(cursor).toEqual({ s: 10, c: 'b' });
    expect(isAfter(9, 'a', cursor)).toBe(true);
    expect(isAfter(10, 'c', cursor)).toBe(true);
    expect(isAfter(10, 'b', cursor)).toBe(false);
    expect(isAfter(11, 'z', cursor)).toBe(false);
  });
  it.each(['nope', Buffer.from('{"s":"x"}').toString('base64url')])('refuses %s', (text) => {
    expect(() => decodeCursor(text)).toThrow(StoryQueryError);
  });
});

describe('nameWords', () => {
  it('lower-cases, drops accents and short words', () => {
    expect(nameWords('Ñoño  O. Pérez-Gil')).toEqual(['nono', 'perez', 'gil']);
  });
});

describe('histogramQuantile', () => {
  it('the upper bound of the bucket the quantile falls in', () => {
    // 3 replies within 30 s, 1 within 10 min.
    const histogram = [3, 0, 0, 0, 1];
    expect(histogramQuantile(histogram, 0.5)).toBe(FIRST_REPLY_BUCKETS_MS[0]);
    expect(histogramQuantile(histogram, 0.9)).toBe(FIRST_REPLY_BUCKETS_MS[4]);
    expect(histogramQuantile([], 0.5)).toBeNull();
  });
});
