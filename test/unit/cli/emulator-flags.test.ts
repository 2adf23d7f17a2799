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
