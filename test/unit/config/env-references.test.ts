import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenizeEnvReferences } from '../../../src/config/env-references.js';

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

const piece = fc.oneof(
  fc.constantFrom('${A}', '${LONG_NAME:-default}', '$${', '${bad-name}', '${', 'x', 'key: ', '\n', ' '),
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

  it('maps offsets after 50,000 references quickly', () => {
    const original = Array.from({ length: 50_000 }, (_, i) => `k${i}: \${V${i}}`).join('\n');
    const tokenized = tokenizeEnvReferences(original);
    const started = performance.now();
    let sum = 0;
    for (let i = 0; i < 50_000; i++) sum += tokenized.toOriginalOffset(tokenized.text.length - 1 - i);
    expect(sum).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(tokenized.toOriginalOffset(tokenized.text.length)).toBe(original.length);
  });
});
