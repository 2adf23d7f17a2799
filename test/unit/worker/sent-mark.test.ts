import { describe, expect, it } from 'vitest';
import { formatSentMark, parseSentMark, toStoredFacts } from '../../../src/worker/conversation-facts.js';

describe('sent-text marks (R: fields of the conversation hash)', () => {
  it('round-trips a mark with the run of sends it closes', () => {
    const chain = { since: 1_700_000_000_000, count: 3 };
    const value = formatSentMark(1_700_000_004_000, chain);
    expect(value).toBe('1700000004000|1700000000000|3');
    expect(parseSentMark(value)).toEqual({ at: 1_700_000_004_000, chain });
  });

  it('writes a mark without a known run as the bare time, the form earlier versions wrote and read', () => {
    expect(formatSentMark(5, null)).toBe('5');
    expect(parseSentMark('5')).toEqual({ at: 5, chain: null });
  });

  it.each([
    ['too few parts', '5|4'],
    ['too many parts', '5|4|1|2'],
    ['a count of 0', '5|4|0'],
    ['a negative count', '5|4|-1'],
    ['a fractional count', '5|4|1.5'],
    ['no start', '5||1'],
    ['words', '5|soon|many'],
  ])('reads %s as "not known" (the safe reading: history is read before the next send)', (_n, value) => {
    expect(parseSentMark(value)).toEqual({ at: 5, chain: null });
  });

  it('gives the facts the time of every mark and the run of the marks that have one', () => {
    const facts = toStoredFacts({ 'R:aa': '10', 'R:bb': '20|12|2', 'S:m7': '20' });
    expect(facts.recentlySent).toEqual({ aa: 10, bb: 20 });
    expect(facts.recentChains).toEqual({ bb: { since: 12, count: 2 } });
    expect(facts.sentIds).toEqual({ m7: 20 });
  });
});
