import { describe, expect, it } from 'vitest';
import { identifyBusiness } from '../../../src/emulator/identify-business.js';

const businesses = [
  { businessId: 'toko-a', secret: 'sk-a' },
  { businessId: 'toko-b', secret: 'sk-b' },
  { businessId: 'toko-c', secret: 'sk-c' },
];
const b64 = (text: string) => Buffer.from(text).toString('base64');
const plain = { allowMerchantHeaders: false };
const history = { allowMerchantHeaders: true };

describe('identifyBusiness (issue 26, item 5)', () => {
  it.each([
    ['current', { business: 'toko-b', secret: 'sk-b' }, plain, 1],
    // Named by its id even with another business's secret: authentication then refuses it.
    ['current', { business: 'toko-b', secret: 'sk-a' }, plain, 1],
    ['current', { business: ' toko-c ', secret: 'x' }, plain, 2],
    ['current', { authorization: `Bearer ${b64('toko-c:sk-c')}` }, plain, 2],
    ['current', { authorization: `bearer ${b64('toko-b:sk-a')}` }, plain, 1],
    // The Business header names the business; a bearer beside it is checked against that one.
    [
      'current',
      { business: 'toko-a', secret: 'sk-a', authorization: `Bearer ${b64('toko-b:sk-b')}` },
      plain,
      0,
    ],
    ['earlier', { authorization: 'Bearer sk-b' }, plain, 1],
    ['earlier', { authorization: 'Bearer sk-c' }, history, 2],
    ['earlier', { merchant_id: 'toko-c', secret_key: 'sk-a' }, history, 2],
    ['earlier', { merchant_id: 'toko-b', authorization: 'Bearer sk-a' }, history, 1],
    ['earlier', { secret_key: 'sk-b' }, history, 1],
    // Issue 29: the current form's history call names its business by merchant_id too.
    ['current', { merchant_id: 'toko-c', secret_key: 'sk-c' }, history, 2],
    ['current', { business: 'toko-a', secret: 'sk-a', merchant_id: 'toko-c' }, history, 0],
  ] as const)('%s form: %j names business %i', (form, headers, options, index) => {
    expect(identifyBusiness(form, headers, businesses, options)).toBe(index);
  });

  it.each([
    ['current', {}],
    ['current', { business: 'toko-z', secret: 'sk-a' }],
    ['current', { authorization: `Bearer ${b64('toko-z:sk-a')}` }],
    ['current', { authorization: 'Bearer sk-a' }],
    ['current', { authorization: `Bearer${b64('toko-a:sk-a')}` }],
    ['earlier', { authorization: 'Bearer sk-z' }],
    ['earlier', { authorization: 'Bearersk-a' }],
    // merchant headers count only on the history call.
    ['earlier', { merchant_id: 'toko-b', secret_key: 'sk-b' }],
    ['earlier', { business: 'toko-b', secret: 'sk-b' }],
    ['current', { merchant_id: 'toko-b', secret_key: 'sk-b' }],
  ] as const)('%s form: %j names no business', (form, headers) => {
    expect(identifyBusiness(form, headers, businesses, plain)).toBeUndefined();
  });
});
