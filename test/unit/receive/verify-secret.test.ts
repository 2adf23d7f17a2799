import { describe, expect, it } from 'vitest';
import { createSecretVerifier, presentedSecrets } from '../../../src/receive/verify-secret.js';

const SECRET = 'whsec-3f9a1c77b2e04d5a';
const ROTATED = 'whsec-new-88d0e6a1c9b2';

describe('createSecretVerifier', () => {
  const verify = createSecretVerifier([SECRET, ROTATED]);

  it.each([
    ['Authorization: <secret>', { authorization: SECRET }],
    ['Authorization: Bearer <secret>', { authorization: `Bearer ${SECRET}` }],
    ['Authorization: bearer <secret> (any case)', { authorization: `bearer ${SECRET}` }],
    ['secret: <secret>', { secret: SECRET }],
    ['the second of two accepted secrets (rotation)', { authorization: ROTATED }],
    ['a right secret header beside a wrong Authorization', { authorization: 'nope', secret: SECRET }],
  ])('accepts %s', (_label, headers) => {
    expect(verify(headers)).toBe(true);
  });

  it.each([
    ['no secret header at all', {}],
    ['an empty Authorization', { authorization: '' }],
    ['"Bearer" alone', { authorization: 'Bearer' }],
    ['"Bearer " with nothing after it', { authorization: 'Bearer ' }],
    ['a shorter secret', { authorization: SECRET.slice(0, -1) }],
    ['a longer secret', { authorization: `${SECRET}x` }],
    ['a multibyte secret of the same length', { authorization: `${SECRET.slice(0, -1)}é` }],
    ['a secret with another case', { authorization: SECRET.toUpperCase() }],
    ['the secret in an unrelated header', { 'x-secret': SECRET }],
    ['Basic instead of Bearer', { authorization: `Basic ${SECRET}` }],
    ['Bearer with the secret twice', { authorization: `Bearer ${SECRET}${SECRET}` }],
    ['an empty secret header', { secret: '' }],
  ])('rejects %s', (_label, headers) => {
    expect(verify(headers as Record<string, string>)).toBe(false);
  });

  it('compares the bytes on the wire with the UTF-8 bytes of a non-ASCII secret', () => {
    const unicode = createSecretVerifier(['rahasia-ñandú-🔑']);
    // Node hands header bytes over decoded as latin1; this is how the UTF-8 secret arrives.
    const onTheWire = Buffer.from('rahasia-ñandú-🔑', 'utf8').toString('latin1');
    expect(unicode({ authorization: onTheWire })).toBe(true);
    expect(unicode({ authorization: 'rahasia-ñandú-🔑' })).toBe(false);
  });

  it.each([
    ['no secrets', []],
    ['an empty secret', ['']],
  ])('refuses to build with %s', (_label, secrets) => {
    expect(() => createSecretVerifier(secrets)).toThrow(
      'createSecretVerifier needs at least one non-empty secret',
    );
  });
});

describe('presentedSecrets', () => {
  it.each([
    [{ authorization: 'abc' }, ['abc']],
    [{ authorization: 'Bearer abc' }, ['Bearer abc', 'abc']],
    [{ authorization: 'Bearer   abc' }, ['Bearer   abc', 'abc']],
    [{ secret: 'abc' }, ['abc']],
    [{ authorization: 'a', secret: 'b' }, ['a', 'b']],
    [{}, []],
  ])('%j presents %j', (headers, expected) => {
    expect(presentedSecrets(headers)).toEqual(expected);
  });
});

describe('createSecretVerifier: every configured secret must be usable', () => {
  it('refuses to build when any one of several secrets is empty', () => {
    expect(() => createSecretVerifier([SECRET, ''])).toThrow(
      'createSecretVerifier needs at least one non-empty secret',
    );
  });
});
