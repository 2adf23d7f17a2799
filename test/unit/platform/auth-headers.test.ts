import { describe, expect, it } from 'vitest';
import { authHeaders } from '../../../src/platform/auth-headers.js';

describe('authHeaders', () => {
  it.each([
    [
      { scheme: 'headers', businessId: 'biz-1', secret: 's3cret' },
      { business: 'biz-1', secret: 's3cret' },
    ],
    [
      { scheme: 'bearer', businessId: 'biz-1', secret: 's3cret' },
      { authorization: `Bearer ${Buffer.from('biz-1:s3cret').toString('base64')}` },
    ],
    [{ scheme: 'bearer-secret', secret: 's3cret' }, { authorization: 'Bearer s3cret' }],
  ] as const)('%j', (auth, expected) => {
    expect(authHeaders(auth, { earlierFormHistory: false })).toEqual(expected);
  });

  it('adds merchant_id and secret_key on the earlier-form history call', () => {
    expect(
      authHeaders(
        { scheme: 'bearer-secret', businessId: 'biz-1', secret: 's' },
        { earlierFormHistory: true },
      ),
    ).toEqual({
      authorization: 'Bearer s',
      merchant_id: 'biz-1',
      secret_key: 's',
    });
  });

  it('sends secret_key alone when no business id is configured', () => {
    expect(authHeaders({ scheme: 'bearer-secret', secret: 's' }, { earlierFormHistory: true })).toEqual({
      authorization: 'Bearer s',
      secret_key: 's',
    });
  });
});
