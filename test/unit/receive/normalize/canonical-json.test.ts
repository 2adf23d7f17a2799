import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../src/receive/normalize/canonical-json.js';

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}'],
    [[1, 'x', true, null], '[1,"x",true,null]'],
    ['text', '"text"'],
    [1.5, '1.5'],
    [{}, '{}'],
  ])('writes %j as %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('gives the same text whatever order the keys were written in', () => {
    const one = JSON.parse('{"event":"x","message":{"id":"1","text":"a"},"timestamp":1}');
    const two = JSON.parse('{"timestamp":1,"message":{"text":"a","id":"1"},"event":"x"}');
    expect(canonicalJson(one)).toBe(canonicalJson(two));
  });

  it('keeps a parsed __proto__ key as plain data', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":2}'))).toBe('{"__proto__":{"x":1},"a":2}');
  });
});
