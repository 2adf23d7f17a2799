import { describe, expect, it } from 'vitest';
import { SINGLE_BUSINESS_NAMING } from '../../../src/events/business-naming.js';
import { type ReceiverOptions, resolveReceiverOptions } from '../../../src/receive/receiver-options.js';

const valid: ReceiverOptions = { secrets: ['s3cret-abc'], redisUrl: 'redis://127.0.0.1:6379' };

describe('resolveReceiverOptions', () => {
  it('fills in the documented defaults', () => {
    expect(resolveReceiverOptions(valid)).toEqual({
      path: '/webhooks/platform',
      secrets: ['s3cret-abc'],
      bodyLimitBytes: 1_048_576,
      dedupeWindowSeconds: 259_200,
      enqueueTimeoutMs: 2000,
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'cb',
      quarantineMax: 10_000,
      quarantineBodyBytes: 65_536,
      quarantineMaxAgeSeconds: 30 * 86_400,
      eventStreamMaxLen: 100,
      repeatLogIntervalMs: 30_000,
      // path and secrets are the one business of a config without businesses: (the single naming).
      businesses: [
        {
          id: 'default',
          path: '/webhooks/platform',
          secrets: ['s3cret-abc'],
          naming: SINGLE_BUSINESS_NAMING,
        },
      ],
    });
  });

  it.each([
    [
      'no secrets',
      { secrets: [] },
      'invalid receiver options: receiver.secrets: at least one secret is needed',
    ],
    [
      'an empty secret',
      { secrets: ['ok-secret', ''] },
      'invalid receiver options: receiver.secrets.1: a secret is empty',
    ],
    [
      'a secret with a trailing space',
      { secrets: ['s3cret '] },
      'invalid receiver options: receiver.secrets.0: a secret starts or ends with whitespace, which HTTP headers cannot carry',
    ],
    [
      'a secret with a line break',
      { secrets: ['s3c\nret'] },
      'invalid receiver options: receiver.secrets.0: a secret contains a line break or NUL, which HTTP headers cannot carry',
    ],
    [
      'a path without a leading slash',
      { path: 'hooks' },
      'invalid receiver options: receiver.path: must start with "/" and use only letters, digits and / _ . ~ -',
    ],
    [
      'a body limit below 1 KiB',
      { bodyLimitBytes: 10 },
      'invalid receiver options: receiver.bodyLimitBytes: Too small: expected number to be >=1024',
    ],
    [
      'an enqueue timeout of 0',
      { enqueueTimeoutMs: 0 },
      'invalid receiver options: receiver.enqueueTimeoutMs: Too small: expected number to be >=50',
    ],
    [
      'an http:// Redis URL',
      { redisUrl: 'http://localhost:6379' },
      'invalid receiver options: receiver.redisUrl: must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379',
    ],
    [
      'a Redis URL whose database part is not a number',
      { redisUrl: 'redis://localhost:6379/abc' },
      'invalid receiver options: receiver.redisUrl: redis://localhost:6379/abc: the database part "abc" is not a database number',
    ],
    [
      'a prefix with a colon',
      { prefix: 'a:b' },
      'invalid receiver options: receiver.prefix: use 1-64 letters, digits, "_", "." or "-"',
    ],
    [
      'no Redis at all',
      { redisUrl: undefined },
      'invalid receiver options: give redisUrl (e.g. redis://127.0.0.1:6379) or redis',
    ],
  ])('rejects %s', (_label, override, message) => {
    expect(() => resolveReceiverOptions({ ...valid, ...override } as ReceiverOptions)).toThrow(message);
  });

  it('never puts a secret value in the error', () => {
    try {
      resolveReceiverOptions({ ...valid, secrets: ['top-secret-value '] });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('top-secret-value');
      expect(error).toMatchObject({ code: 'RECEIVER_CONFIG' });
    }
  });
});
