import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { emulatorOptionsFromFlags } from '../../../src/cli/emulator-command.js';

const base = { port: '0', form: 'current', businessId: 'b', secret: 's', delivery: 'immediate' } as const;

describe('emulator flags for fault-injection runs', () => {
  it('maps --webhook-retry-delays, --request-log-size and --delivery-log-size onto the options', () => {
    const options = emulatorOptionsFromFlags({
      ...base,
      webhookRetryDelays: '2000, 4000,8000',
      requestLogSize: '500000',
      deliveryLogSize: '100000',
    });
    expect(options).toMatchObject({
      webhookRetryDelaysMs: [2000, 4000, 8000],
      requestLogSize: 500_000,
      deliveryLogSize: 100_000,
    });
  });

  it('leaves the defaults alone when the flags are absent', () => {
    const options = emulatorOptionsFromFlags(base);
    expect(options).not.toHaveProperty('webhookRetryDelaysMs');
    expect(options).not.toHaveProperty('requestLogSize');
    expect(options).not.toHaveProperty('deliveryLogSize');
  });

  it.each([
    [
      { webhookRetryDelays: '1000,5000' },
      '--webhook-retry-delays takes three delays in milliseconds (before attempts 2, 3 and 4), e.g. 1000,5000,25000; got "1000,5000"',
    ],
    [
      { webhookRetryDelays: '1000,5000,25000,60000' },
      '--webhook-retry-delays takes three delays in milliseconds (before attempts 2, 3 and 4), e.g. 1000,5000,25000; got "1000,5000,25000,60000"',
    ],
    [
      { webhookRetryDelays: '1000,soon,25000' },
      '--webhook-retry-delays: each delay must be a whole number from 0 to 600000, got "soon"',
    ],
    [
      { webhookRetryDelays: '1000,-5,25000' },
      '--webhook-retry-delays: each delay must be a whole number from 0 to 600000, got "-5"',
    ],
    [
      { webhookRetryDelays: '1000,5000,600001' },
      '--webhook-retry-delays: each delay must be a whole number from 0 to 600000, got "600001"',
    ],
    [{ requestLogSize: '0' }, '--request-log-size must be a whole number from 1 to 1000000, got "0"'],
    [{ requestLogSize: 'many' }, '--request-log-size must be a whole number from 1 to 1000000, got "many"'],
    [
      { deliveryLogSize: '1000001' },
      '--delivery-log-size must be a whole number from 1 to 1000000, got "1000001"',
    ],
    [{ deliveryLogSize: '1.5' }, '--delivery-log-size must be a whole number from 1 to 1000000, got "1.5"'],
  ])('rejects %j with a CliError naming the flag', (flags, message) => {
    let thrown: unknown;
    try {
      emulatorOptionsFromFlags({ ...base, ...flags });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).message).toBe(message);
  });
});

describe('emulator flags for several businesses (issue 26, item 5)', () => {
  const first = { port: '0', form: 'current', delivery: 'immediate' } as const;

  it('adds each --business after the business of --business-id, in order', () => {
    const options = emulatorOptionsFromFlags({
      ...base,
      business: ['toko-b:sk-b', 'toko-c:sk-c:http://127.0.0.1:8080/webhooks/toko-c'],
    });
    expect(options).toMatchObject({ businessId: 'b', secret: 's' });
    expect(options.businesses).toEqual([
      { businessId: 'toko-b', secret: 'sk-b' },
      { businessId: 'toko-c', secret: 'sk-c', webhook: { url: 'http://127.0.0.1:8080/webhooks/toko-c' } },
    ]);
  });

  it('takes --business without --business-id (the first --business is the first business)', () => {
    const options = emulatorOptionsFromFlags({ ...first, business: ['toko-a:sk-a'] });
    expect(options).not.toHaveProperty('businessId');
    expect(options.businesses).toEqual([{ businessId: 'toko-a', secret: 'sk-a' }]);
  });

  it('appends the businesses of a --businesses file after the --business flags', () => {
    const options = emulatorOptionsFromFlags({ ...base, business: ['toko-b:sk-b'] }, [
      { options: { businessId: 'toko-c', secret: 'sk-c' }, where: 'b.yaml:2:5' },
    ]);
    expect(options.businesses?.map((b) => b.businessId)).toEqual(['toko-b', 'toko-c']);
  });

  it.each([
    [
      { ...base, business: ['nocolon'] },
      `--business takes ID:SECRET or ID:SECRET:WEBHOOK_URL, e.g. --business "toko-b:$TOKO_B_SECRET:http://127.0.0.1:8080/webhooks/toko-b"; one has no ID before its first ':'`,
    ],
    [{ ...base, business: [':sk'] }, "one has no ID before its first ':'"],
    [{ ...base, business: ['toko-b:'] }, '--business toko-b has no SECRET'],
    [
      { ...base, business: ['toko-b:sk-b:ftp://x'] },
      "--business toko-b: what follows the secret must be an http(s) webhook URL, e.g. toko-b:SECRET:http://127.0.0.1:8080/webhooks/toko-b (a secret with ':' in it goes in a --businesses file)",
    ],
    [
      { ...base, business: ['b:other'] },
      '--business b: business id "b" is also given by --business-id: each business needs its own id',
    ],
    [
      { ...base, business: ['toko-b:s'] },
      "--business toko-b: its secret is also the secret of --secret (b): give each business its own Secret Key (the earlier form's plain bearer names a business by its key alone)",
    ],
    [{ ...base, business: ['x:1', 'x:2'] }, '--business x: business id "x" is also given by --business x'],
    [
      { ...first, business: ['toko-a:sk-a'], webhookUrl: 'http://127.0.0.1:1/w', seed: 'seed.yaml' },
      '--webhook-url, --seed configure the business of --business-id, which is not given: add --business-id and --secret, or use --business ID:SECRET:WEBHOOK_URL or a --businesses file',
    ],
    [
      { ...first, business: ['toko-a:sk-a'], apiFeature: false },
      '--no-api-feature configures the business of --business-id, which is not given',
    ],
    [first, 'no business: give --business-id and --secret, or --business ID:SECRET, or --businesses FILE'],
  ])('rejects %j with a CliError that never shows a secret', (flags, message) => {
    let thrown: unknown;
    try {
      emulatorOptionsFromFlags(flags);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).message).toContain(message);
    for (const secret of ['sk-b', 'sk-a', 'other', ':2'])
      expect((thrown as CliError).message).not.toContain(secret);
  });

  it('names a file business by its place in the file', () => {
    expect(() =>
      emulatorOptionsFromFlags(base, [{ options: { businessId: 'b', secret: 'x' }, where: 'more.yaml:3:5' }]),
    ).toThrow('more.yaml:3:5 (b): business id "b" is also given by --business-id');
  });
});
