import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/emulator-error.js';
import { resolveEmulatorOptions } from '../../../src/emulator/emulator-options.js';

function message(input: unknown): string {
  try {
    resolveEmulatorOptions(input);
  } catch (error) {
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as EmulatorError).code).toBe('EMULATOR_OPTIONS_INVALID');
    return (error as Error).message;
  }
  throw new Error('expected the options to be refused');
}

describe('resolveEmulatorOptions: businesses (issue 26, item 5)', () => {
  it('keeps one business from the top-level options, as before', () => {
    const o = resolveEmulatorOptions({
      businessId: 'biz-1',
      secret: 's',
      webhook: { url: 'http://127.0.0.1:1/w' },
      handoverWebhook: { url: 'http://127.0.0.1:1/h', secret: 'hs' },
    });
    expect(o.businesses).toEqual([
      {
        id: 'biz-1',
        secret: 's',
        name: 'Toko Emulator',
        webhook: { url: 'http://127.0.0.1:1/w', secret: 's' },
        handoverWebhook: { url: 'http://127.0.0.1:1/h', secret: 'hs' },
        apiFeature: true,
        seedData: undefined,
        seedFile: undefined,
        where: '',
      },
    ]);
  });

  it('puts the top-level business first, then the list; each webhook carries its own Secret Key', () => {
    const o = resolveEmulatorOptions({
      businessId: 'a',
      secret: 'sa',
      businesses: [
        { businessId: 'b', secret: 'sb', webhook: { url: 'http://127.0.0.1:1/b' }, apiFeature: false },
        {
          businessId: 'c',
          secret: 'sc',
          businessName: 'Toko C',
          webhook: { url: 'http://127.0.0.1:1/c', secret: 'wc' },
        },
      ],
    });
    expect(o.businesses.map((b) => [b.id, b.name, b.webhook?.secret, b.apiFeature])).toEqual([
      ['a', 'Toko Emulator', undefined, true],
      ['b', 'b', 'sb', false],
      ['c', 'Toko C', 'wc', true],
    ]);
  });

  it('takes the list alone; its first entry is the first business', () => {
    const o = resolveEmulatorOptions({
      businesses: [
        { businessId: 'x', secret: 'sx' },
        { businessId: 'y', secret: 'sy' },
      ],
    });
    expect(o.businesses.map((b) => [b.id, b.name])).toEqual([
      ['x', 'Toko Emulator'],
      ['y', 'y'],
    ]);
  });

  it.each([
    [
      {},
      'invalid emulator options: no business: give businessId and secret, or a businesses list with at least one entry',
    ],
    [{ businesses: [] }, 'no business: give businessId and secret'],
    [{ businessId: 'a' }, 'give businessId and secret together (got only businessId)'],
    [
      { secret: 's', businesses: [{ businessId: 'b', secret: 'sb' }] },
      'give businessId and secret together (got only secret)',
    ],
    [
      { webhook: { url: 'http://127.0.0.1:1/w' }, businesses: [{ businessId: 'b', secret: 'sb' }] },
      'webhook belongs to the business of businessId, which is not given: add businessId and secret, or move it into a businesses entry',
    ],
    [
      { businessId: 'a', secret: 'sa', businesses: [{ businessId: 'a', secret: 'sb' }] },
      'businesses.0: business id "a" is already used by businessId: each business needs its own id',
    ],
    [
      {
        businesses: [
          { businessId: 'a', secret: 's1' },
          { businessId: 'b', secret: 's2' },
          { businessId: 'b', secret: 's3' },
        ],
      },
      'businesses.2: business id "b" is already used by businesses.1',
    ],
    [
      { businessId: 'a', secret: 'same', businesses: [{ businessId: 'b', secret: 'same' }] },
      'businesses.0: its secret is also the secret of businessId: give each business its own Secret Key',
    ],
    [{ businesses: [{ businessId: 'b' }] }, 'businesses.0.secret:'],
    [
      { businesses: [{ businessId: 'b', secret: 's', webhook: { url: 'ftp://x' } }] },
      'businesses.0.webhook.url: webhook.url must be an http(s) URL',
    ],
    [
      { businesses: [{ businessId: 'b', secret: 's', form: 'earlier' }] },
      'businesses.0: Unrecognized key: "form"',
    ],
  ])('refuses %j', (input, expected) => {
    const text = message(input);
    expect(text).toContain(expected);
  });

  it('never puts a secret in a message', () => {
    expect(
      message({ businessId: 'a', secret: 'hunter2', businesses: [{ businessId: 'b', secret: 'hunter2' }] }),
    ).not.toContain('hunter2');
  });
});
