import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRepeatSummary } from '../../../src/observe/repeat-summary.js';

describe('createRepeatSummary: repeated failures as one line per interval with a count', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const setUp = () => {
    const lines: { occurrence: number; repeated: number }[] = [];
    const summary = createRepeatSummary<number>({
      intervalMs: 30_000,
      log: (occurrence, repeated) => lines.push({ occurrence, repeated }),
    });
    return { lines, summary };
  };

  it('logs the first at once and the next 199 as one line when the interval ends', () => {
    const { lines, summary } = setUp();
    for (let i = 1; i <= 200; i += 1) summary.note('no replica', i);
    expect(lines).toEqual([{ occurrence: 1, repeated: 0 }]);
    vi.advanceTimersByTime(30_000);
    expect(lines).toEqual([
      { occurrence: 1, repeated: 0 },
      { occurrence: 200, repeated: 199 },
    ]);
  });

  it('keeps counting per interval while they go on, and logs at once again after a quiet interval', () => {
    const { lines, summary } = setUp();
    summary.note('no replica', 1);
    vi.advanceTimersByTime(10_000);
    summary.note('no replica', 2);
    vi.advanceTimersByTime(20_000); // first interval ends: 1 counted
    summary.note('no replica', 3);
    summary.note('no replica', 4);
    vi.advanceTimersByTime(30_000); // second interval: 2 counted
    vi.advanceTimersByTime(30_000); // third interval: nothing, the tally is dropped
    summary.note('no replica', 5);
    expect(lines).toEqual([
      { occurrence: 1, repeated: 0 },
      { occurrence: 2, repeated: 1 },
      { occurrence: 4, repeated: 2 },
      { occurrence: 5, repeated: 0 },
    ]);
  });

  it('counts each reason apart, and flush logs what is counted', () => {
    const { lines, summary } = setUp();
    summary.note('a', 1);
    summary.note('b', 2);
    summary.note('a', 3);
    summary.note('b', 4);
    summary.note('b', 5);
    summary.flush();
    expect(lines).toEqual([
      { occurrence: 1, repeated: 0 },
      { occurrence: 2, repeated: 0 },
      { occurrence: 3, repeated: 1 },
      { occurrence: 5, repeated: 2 },
    ]);
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(4);
  });
});
