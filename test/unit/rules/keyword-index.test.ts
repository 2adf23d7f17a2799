import { describe, expect, it } from 'vitest';
import { createKeywordIndexBuilder, findKeywords } from '../../../src/rules/keyword-index.js';
import { normalizeWords } from '../../../src/rules/normalize-text.js';
import { cpuMs } from '../../support/cpu-time.js';

const KEYWORDS = ['refund', 'komplain', 'kecewa', 'tidak puas', "I don't know", 'café', 'pesanan saya'];

function matches(text: string): string[] {
  const builder = createKeywordIndexBuilder();
  const ids = KEYWORDS.map((k) => builder.add(k));
  const found = findKeywords(builder.build(), normalizeWords(text));
  return KEYWORDS.filter((_k, i) => found.has(ids[i] ?? -1));
}

describe('keyword matching', () => {
  it.each([
    ['I want a refund', ['refund']],
    ['REFUND now', ['refund']],
    ['Refund!!!', ['refund']],
    ['(refund)', ['refund']],
    ['"refund",komplain.', ['refund', 'komplain']],
    ['saya KÉCÉWA', ['kecewa']],
    ['Saya tidak   puas', ['tidak puas']],
    ['TIDAK\npuas', ['tidak puas']],
    ['tidak-puas', ['tidak puas']],
    ['I dont know', []],
    ["i don't KNOW", ["I don't know"]],
    ['cafe au lait', ['café']],
    ['refund 😡😡', ['refund']],
    ['😡refund😡', ['refund']],
    ['pesanan saya belum sampai', ['pesanan saya']],
  ])('%j matches %j', (text, expected) => {
    expect(matches(text)).toEqual(expected);
  });

  it.each([
    ['this is refundable', 'refund inside a longer word'],
    ['komplainnya sudah', 'komplain with a suffix'],
    ['prefund', 'refund at the end of a word'],
    ['tidak', 'half of a phrase'],
    ['puas tidak', 'a phrase in the wrong order'],
    ['tidakpuas', 'a phrase without the space'],
    ['', 'empty text'],
  ])('%j does not match (%s)', (text) => {
    expect(matches(text)).toEqual([]);
  });

  it('reports the first position of each keyword', () => {
    const builder = createKeywordIndexBuilder();
    const refund = builder.add('refund');
    const phrase = builder.add('tidak puas');
    const found = findKeywords(builder.build(), normalizeWords('aku tidak puas, refund! refund!'));
    expect(found.get(phrase)).toBe(1);
    expect(found.get(refund)).toBe(3);
  });

  it('shares one id between keywords equal after normalisation', () => {
    const builder = createKeywordIndexBuilder();
    expect(builder.add('Kecewa')).toBe(builder.add('kécéwa'));
  });

  it('scans a very long text in linear time', () => {
    const builder = createKeywordIndexBuilder();
    for (let i = 0; i < 5000; i++) builder.add(`kata${i} lain${i}`);
    const target = builder.add('tidak puas');
    const index = builder.build();
    const text = `${'kata1 '.repeat(200_000)}tidak puas`;
    const started = cpuMs();
    const found = findKeywords(index, normalizeWords(text));
    expect(found.get(target)).toBe(200_000);
    expect(cpuMs() - started).toBeLessThan(2_000);
  });
});
