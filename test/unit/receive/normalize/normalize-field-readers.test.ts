import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FIELD_READERS } from '../../../../src/receive/normalize/normalize-event.js';

// The readers as they were before they became one check per field (zod unions and transforms):
// the reference the cheaper form must match, value for value and failure for failure.
const RefText = z.union([z.string(), z.number().refine(Number.isFinite), z.bigint()]).transform(String);
const RefOptText = RefText.nullish().transform((v) => (v === undefined || v === null || v === '' ? null : v));
const RefOptId = RefOptText.transform((v) => (v === null ? null : v.trim() || null));

const pairs = [
  ['Text', RefText, FIELD_READERS.Text],
  ['OptText', RefOptText, FIELD_READERS.OptText],
  ['OptId', RefOptId, FIELD_READERS.OptId],
] as const;

const value = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom('', ' ', '  id  ', '\t', '0', 'null'),
  fc.double(),
  fc.integer(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);

/** The outcome as the normalizer sees it: the value, or the paths of the issues. */
function outcome(schema: z.ZodType, input: unknown) {
  const parsed = schema.safeParse(input);
  return parsed.success ? { value: parsed.data } : { paths: parsed.error.issues.map((i) => i.path) };
}

describe('webhook field readers: the one-check form reads exactly as the union form did', () => {
  for (const [name, reference, reader] of pairs) {
    it(`${name}: same value or same failing path, present, absent or null, for any value`, () => {
      const refObject = z.object({ f: reference });
      const object = z.object({ f: reader });
      fc.assert(
        fc.property(value, fc.boolean(), (v, present) => {
          const input = present ? { f: v } : {};
          expect(outcome(object, input)).toEqual(outcome(refObject, input));
        }),
        { numRuns: 2000 },
      );
    });
  }
});
