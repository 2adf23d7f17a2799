import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenizeEnvReferences } from '../../../src/config/env-references.js';
import { cpuMs } from '../../support/cpu-time.js';

/** The earlier linear scan, as the reference for where an offset of the tokenised text came from. */
function linearOriginalOffset(original: string, offset: number): number {
  const tokenized = tokenizeEnvReferences(original);
  // Rebuild the shifts by walking the references in order.
  let delta = 0;
  for (const reference of [...tokenized.references.values()].sort((a, b) => a.offset - b.offset)) {
    const newStart = reference.offset - delta;
    const newEnd = newStart + reference.token.length;
    if (offset < newStart) break;
    if (offset < newEnd) return reference.offset;
    delta = reference.offset + reference.source.length - newEnd;
  }
  return offset + delta;
}

/** The references as the earlier tokenizer found them (a fresh indexOf from every `${`). */
function referenceSources(original: string): [number, string][] {
  const out: [number, string][] = [];
  let i = original.indexOf('$');
  while (i !== -1 && i < original.length) {
    if (original.startsWith('$${', i)) {
      out.push([i, '$${']);
      i = original.indexOf('$', i + 3);
    } else if (original.startsWith('${', i)) {
      const close = original.indexOf('}', i + 2);
      const newline = original.indexOf('\n', i + 2);
      const length = close === -1 || (newline !== -1 && newline < close) ? 2 : close + 1 - i;
      out.push([i, original.slice(i, i + length)]);
      i = original.indexOf('$', i + length);
    } else {
      i = original.indexOf('$', i + 1);
    }
  }
  return out;
}

const piece = fc.oneof(
  fc.constantFrom('${A}', '${LONG_NAME:-default}', '$${', '${bad-name}', '${', '}', 'x', 'key: ', '\n', ' '),
  fc.string({ maxLength: 5 }),
);

describe('tokenizeEnvReferences: mapping offsets back (regression: a linear scan per offset)', () => {
  it('maps every offset of the tokenised text exactly as the linear scan did', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const original = pieces.join('');
        const tokenized = tokenizeEnvReferences(original);
        for (let offset = 0; offset <= tokenized.text.length; offset++) {
          expect(tokenized.toOriginalOffset(offset)).toBe(linearOriginalOffset(original, offset));
        }
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['unclosed ${ (300 KB)', '${'.repeat(150_000)],
    ['unclosed ${ before a closing brace on the next line', `${'${'.repeat(150_000)}\n}`],
    ['${ closed at the very end', `${'${'.repeat(150_000)}}`],
  ])(
    'tokenises %s in linear time (regression: a search to the end of the text from every ${)',
    (_name, text) => {
      const started = cpuMs();
      const tokenized = tokenizeEnvReferences(text);
      expect(cpuMs() - started).toBeLessThan(1_000);
      expect(tokenized.references.size).toBeGreaterThan(0);
    },
  );

  it('reads the same references as a fresh search from every ${ would', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const sources = [...tokenizeEnvReferences(text).references.values()].map((r) => [r.offset, r.source]);
        expect(sources).toEqual(referenceSources(text));
      }),
      { numRuns: 1_000 },
    );
  });

  it('maps offsets after 50,000 references quickly', () => {
    const original = Array.from({ length: 50_000 }, (_, i) => `k${i}: \${V${i}}`).join('\n');
    const tokenized = tokenizeEnvReferences(original);
    const started = cpuMs();
    let sum = 0;
    for (let i = 0; i < 50_000; i++) sum += tokenized.toOriginalOffset(tokenized.text.length - 1 - i);
    expect(sum).toBeGreaterThan(0);
    expect(cpuMs() - started).toBeLessThan(1_000);
    expect(tokenized.toOriginalOffset(tokenized.text.length)).toBe(original.length);
  });
});
