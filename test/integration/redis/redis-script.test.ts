import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineRedisScript } from '../../../src/redis/redis-script.js';
import { deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

// Regression: scripts defined lazily with ioredis defineCommand broke (and then crashed the process
// with an uncaught TypeError) when first used while an auto-pipeline was pending, which is how the
// receiver's producer connection (enableAutoPipelining) runs ingestEvent next to other commands.
describe('defineRedisScript on an auto-pipelining connection', () => {
  let client: Redis;
  let prefix: string;

  beforeEach(async () => {
    prefix = uniqueName('t-script');
    client = new Redis(testRedisUrl(), { enableAutoPipelining: true });
    await client.ping();
  });
  afterEach(async () => {
    await deleteKeys(client, prefix);
    await client.quit();
  });

  it('runs a script first used in the same tick as other pipelined commands', async () => {
    const incr = defineRedisScript<number>(uniqueName('Incr'), 1, "return redis.call('INCR', KEYS[1])");
    const key = `${prefix}:n`;
    const pending = client.get(`${prefix}:other`);
    const results = await Promise.all([pending, incr(client, [key], []), incr(client, [key], [])]);
    expect(results).toEqual([null, 1, 2]);
  });

  it('falls back to EVAL after the script cache was flushed', async () => {
    const echo = defineRedisScript<string>('Echo', 0, 'return ARGV[1]');
    expect(await echo(client, [], ['one'])).toBe('one');
    await client.script('FLUSH');
    expect(await echo(client, [], ['two'])).toBe('two');
  });

  it('refuses a wrong number of keys', async () => {
    const echo = defineRedisScript<string>('Echo', 0, 'return ARGV[1]');
    await expect(echo(client, ['k'], [])).rejects.toThrow('redis script Echo takes 0 keys, got 1');
  });
});
