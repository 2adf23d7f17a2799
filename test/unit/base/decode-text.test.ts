import { describe, expect, it } from 'vitest';
import { decodeText } from '../../../src/base/decode-text.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('decodeText', () => {
  it.each([
    ['plain text', bytes('a: 1\n'), 'a: 1\n'],
    ['a leading BOM, dropped', bytes([0xef, 0xbb, 0xbf], '{"a":1}'), '{"a":1}'],
    ['multi-byte characters', bytes('text: "café 😀 ✓"\n'), 'text: "café 😀 ✓"\n'],
    ['an empty file', bytes(), ''],
  ])('reads %s', (_what, input, text) => {
    expect(decodeText(input)).toEqual({ ok: true, text });
  });

  it.each([
    ['a Latin-1 é on line 2', bytes('a: 1\nb: caf', [0xe9], '\n'), 2, 7, 'byte 0xE9 is not UTF-8'],
    ['a lone 0xFF after a BOM', bytes([0xef, 0xbb, 0xbf], 'x', [0xff]), 1, 2, 'byte 0xFF is not UTF-8'],
    ['a cut 3-byte sequence at the end', bytes('✓ ', [0xe2, 0x9c]), 1, 3, 'byte 0xE2 is not UTF-8'],
    ['an overlong encoding', bytes('ok\n  ', [0xc0, 0xaf]), 2, 3, 'byte 0xC0 is not UTF-8'],
    ['a UTF-16 surrogate', bytes('é', [0xed, 0xa0, 0x80]), 1, 2, 'byte 0xED is not UTF-8'],
    ['a NUL byte (a binary file)', bytes('\u007fELF', [2, 1, 0]), 1, 7, 'a NUL byte: this is a binary file'],
  ])('names the line and column of %s', (_what, input, line, column, message) => {
    const result = decodeText(input);
    expect(result).toMatchObject({ ok: false, line, column });
    expect(result.ok === false && result.message).toContain(message);
  });
});
