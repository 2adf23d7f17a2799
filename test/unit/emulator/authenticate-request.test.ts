import { describe, expect, it } from 'vitest';
import { authenticateRequest } from '../../../src/emulator/authenticate-request.js';

const expected = { businessId: 'biz', secret: 'sec:ret' };
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('authenticateRequest', () => {
  it.each([
    ['current', { business: 'biz', secret: 'sec:ret' }, 'business-headers'],
    [
      'current',
      { business: 'biz', secret: 'sec:ret', authorization: `Bearer ${b64('biz:sec:ret')}` },
      'business-headers',
    ],
    ['current', { authorization: `Bearer ${b64('biz:sec:ret')}` }, 'encoded-bearer'],
    ['current', { authorization: `BEARER   ${b64('biz:sec:ret')}` }, 'encoded-bearer'],
    ['earlier', { authorization: 'Bearer sec:ret' }, 'plain-bearer'],
    ['earlier', { authorization: ['Bearer sec:ret'] }, 'plain-bearer'],
  ] as const)('%s form accepts %j', (form, headers, scheme) => {
    expect(authenticateRequest(form, headers, expected, { allowMerchantHeaders: false })).toEqual({
      ok: true,
      scheme,
    });
  });

  it.each([
    ['current', {}, 'no credentials'],
    ['current', { business: 'biz' }, 'Business and Secret headers must be sent together'],
    ['current', { business: 'other', secret: 'sec:ret' }, 'unknown Business id'],
    ['current', { business: 'biz', secret: 'nope' }, 'wrong Secret'],
    ['current', { authorization: `Bearer${b64('biz:sec:ret')}` }, 'malformed Authorization header'],
    ['current', { authorization: 'Bearer not*base64' }, 'bearer is not base64 of business_id:secret'],
    ['current', { authorization: `Bearer ${b64('nocolon')}` }, 'bearer is not base64 of business_id:secret'],
    ['current', { authorization: `Bearer ${b64('other:sec:ret')}` }, 'unknown business id in bearer'],
    ['current', { authorization: `Bearer ${b64('biz:nope')}` }, 'wrong secret in bearer'],
    // Issue 12: every credential presented must be right, also an Authorization beside valid
    // Business + Secret headers (it used to be ignored).
    [
      'current',
      { business: 'biz', secret: 'sec:ret', authorization: `Bearer${b64('biz:sec:ret')}` },
      'malformed Authorization header (beside Business and Secret)',
    ],
    [
      'current',
      { business: 'biz', secret: 'sec:ret', authorization: `Bearer ${b64('biz:nope')}` },
      'wrong secret in bearer (beside Business and Secret)',
    ],
    [
      'current',
      { business: 'biz', secret: 'sec:ret', authorization: 'Bearer sec:ret' },
      'bearer is not base64 of business_id:secret (beside Business and Secret)',
    ],
    ['earlier', {}, 'no credentials'],
    ['earlier', { authorization: 'Bearersec:ret' }, 'malformed Authorization header'],
    ['earlier', { authorization: 'Bearer a b' }, 'malformed Authorization header'],
    ['earlier', { authorization: 'Bearer nope' }, 'wrong secret in bearer'],
    ['earlier', { merchant_id: 'biz', secret_key: 'sec:ret' }, 'no credentials'],
  ] as const)('%s form rejects %j: %s', (form, headers, reason) => {
    expect(authenticateRequest(form, headers, expected, { allowMerchantHeaders: false })).toEqual({
      ok: false,
      reason,
    });
  });

  it.each([
    [
      { merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: true, scheme: 'merchant-headers' },
    ],
    [
      { merchant_id: 'biz' },
      { ok: false, reason: 'merchant_id and secret_key headers must be sent together' },
    ],
    [
      { merchant_id: 'x', secret_key: 'sec:ret' },
      { ok: false, reason: 'unknown merchant_id' },
    ],
    [
      { merchant_id: 'biz', secret_key: 'x' },
      { ok: false, reason: 'wrong secret_key' },
    ],
    // Beside a valid bearer, every merchant header presented must be right too (conformance finding).
    [
      { authorization: 'Bearer sec:ret', merchant_id: 'x', secret_key: 'sec:ret' },
      { ok: false, reason: 'unknown merchant_id' },
    ],
    [
      { authorization: 'Bearer sec:ret', merchant_id: 'biz', secret_key: 'x' },
      { ok: false, reason: 'wrong secret_key' },
    ],
    [
      { authorization: 'Bearer sec:ret', merchant_id: 'x' },
      { ok: false, reason: 'unknown merchant_id' },
    ],
    [
      { authorization: 'Bearer sec:ret', merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: true, scheme: 'plain-bearer' },
    ],
    [
      { authorization: 'Bearer sec:ret', secret_key: 'sec:ret' },
      { ok: true, scheme: 'plain-bearer' },
    ],
    [
      { authorization: 'Bearer wrong', merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: false, reason: 'wrong secret in bearer' },
    ],
  ])('earlier-form history call with %j', (headers, verdict) => {
    expect(authenticateRequest('earlier', headers, expected, { allowMerchantHeaders: true })).toEqual(
      verdict,
    );
  });

  // Issue 29, item 4: the current form's history call takes merchant_id + secret_key as well (the
  // live service does, for a public third-party client; docs/conformance.md), as strictly.
  it.each([
    [
      { merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: true, scheme: 'merchant-headers' },
    ],
    [
      { secret_key: 'sec:ret' },
      { ok: false, reason: 'merchant_id and secret_key headers must be sent together' },
    ],
    [
      { merchant_id: 'x', secret_key: 'sec:ret' },
      { ok: false, reason: 'unknown merchant_id' },
    ],
    [
      { merchant_id: 'biz', secret_key: 'x' },
      { ok: false, reason: 'wrong secret_key' },
    ],
    [
      { business: 'biz', secret: 'sec:ret', merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: true, scheme: 'business-headers' },
    ],
    [
      { business: 'biz', secret: 'sec:ret', merchant_id: 'x' },
      { ok: false, reason: 'unknown merchant_id' },
    ],
    [
      { authorization: `Bearer ${b64('biz:sec:ret')}`, secret_key: 'x' },
      { ok: false, reason: 'wrong secret_key' },
    ],
    [
      { authorization: `Bearer ${b64('biz:nope')}`, merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: false, reason: 'wrong secret in bearer' },
    ],
    [
      { business: 'biz', secret: 'nope', merchant_id: 'biz', secret_key: 'sec:ret' },
      { ok: false, reason: 'wrong Secret' },
    ],
  ])('current-form history call with %j', (headers, verdict) => {
    expect(authenticateRequest('current', headers, expected, { allowMerchantHeaders: true })).toEqual(
      verdict,
    );
  });

  it('current form: merchant_id + secret_key outside the history call are no credentials', () => {
    expect(
      authenticateRequest('current', { merchant_id: 'biz', secret_key: 'sec:ret' }, expected, {
        allowMerchantHeaders: false,
      }),
    ).toEqual({ ok: false, reason: 'no credentials' });
  });
});
