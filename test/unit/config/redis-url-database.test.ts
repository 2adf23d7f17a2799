import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { describeWhere, resolveRedisTarget } from '../../../src/cli/redis-target.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { checkRedisUrl } from '../../../src/config/redis-url.js';

// Issue 30, item 4: the database part of a Redis URL, and ports 1-65535 wherever an address is taken.

const base =
  'platform:\n  base_url: https://api.example.com\n  auth: { scheme: headers, business_id: b, secret: s }\nreceiver: {}\n';
const parse = (redis: string) =>
  parseConfigText(`${base}${redis}`, { fileName: 'inline.yaml', env: {} }).config;
/** `file:line:col: message` of every problem, as `validate` prints them. */
const problems = (redis: string): string[] => {
  try {
    parse(redis);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  return [];
};
const PW = 'hunter2-xyz';
const noFile = () => false;

describe('redis.url: the database part', () => {
  it.each([
    ['redis://127.0.0.1:6379', 0],
    ['redis://127.0.0.1:6379/', 0],
    ['redis://127.0.0.1:6379/0', 0],
    ['redis://127.0.0.1:6379/2', 2],
    ['rediss://user:pw@redis.example.com:6380/15', 15],
    ['redis://127.0.0.1:6379/31', 31],
  ])('%s is database %i', (url, database) => {
    expect(checkRedisUrl(url)).toEqual({ ok: true, database });
    expect(problems(`redis: { url: "${url}" }\n`)).toEqual([]);
  });

  it.each([
    ['redis://127.0.0.1:6379/abc', 'the database part "abc" is not a database number'],
    ['redis://127.0.0.1:6379/-1', 'the database part "-1" is not a database number'],
    ['redis://127.0.0.1:6379/2x', 'the database part "2x" is not a database number'],
    ['redis://127.0.0.1:6379/1.5', 'the database part "1.5" is not a database number'],
    ['redis://127.0.0.1:6379/2/3', 'the database part "2/3" is not a database number'],
    ['redis://127.0.0.1:6379?db=2', "give the database as the URL's path (redis://host:port/2), not as ?db="],
    ['redis://127.0.0.1:0', 'port 0 is not a port: give one from 1 to 65535'],
    ['redis://127.0.0.1:70000', 'is not a valid Redis URL (a port from 1 to 65535'],
    ['http://127.0.0.1:6379', 'must be a redis:// or rediss:// URL'],
  ])('%s is refused by validate, at redis.url, saying how to write it', (url, message) => {
    const found = problems(`redis:\n  url: "${url}"\n`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^inline\.yaml:6:8: redis\.url: /);
    expect(found[0]).toContain(message);
  });

  it('names the forms to use for a bad database part', () => {
    const [found] = problems('redis: { url: "redis://10.0.0.5:6379/abc" }\n');
    expect(found).toContain('redis://10.0.0.5:6379/2 for database 2; redis://10.0.0.5:6379 for database 0');
  });

  it('never shows the password of a refused URL', () => {
    const found = problems(`redis: { url: "redis://:${PW}@h:6379/abc" }\n`).join('\n');
    expect(found).toContain('redis://:***@h:6379/abc');
    expect(found).not.toContain(PW);
  });

  it('redis.db (sentinels) takes any database number, a negative one is refused', () => {
    const sentinel = (db: string) => `redis:\n  name: m\n  sentinels: [ "10.0.0.1:26379" ]\n  db: ${db}\n`;
    expect(parse(sentinel('20')).redis.topology).toMatchObject({ kind: 'sentinel', db: 20 });
    expect(problems(sentinel('-1')).join('\n')).toContain('redis.db');
  });

  it('a cluster node or sentinel URL with port 0 is refused like host:0', () => {
    expect(problems('redis:\n  cluster:\n    nodes: [ "redis://10.0.0.1:0" ]\n').join('\n')).toContain(
      'a port from 1 to 65535',
    );
    expect(problems('redis:\n  name: m\n  sentinels: [ "redis://10.0.0.1:0" ]\n').join('\n')).toContain(
      'a port from 1 to 65535',
    );
  });
});

describe('operator commands: --redis-url and $REDIS_URL take the same URL rules', () => {
  it.each([
    ['redis://127.0.0.1:6379/abc', 'the database part "abc" is not a database number'],
    ['redis://127.0.0.1:6379/-1', 'the database part "-1" is not a database number'],
    ['redis://127.0.0.1:0', 'port 0 is not a port'],
    ['127.0.0.1:6379', 'is not a valid Redis URL'],
  ])('--redis-url %s is refused before any connection', async (url, message) => {
    const refused = await resolveRedisTarget({ redisUrl: url }, {}, noFile).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).message).toMatch(/^--redis-url /);
    expect((refused as CliError).message).toContain(message);
  });

  it('$REDIS_URL with a bad database part is refused, naming $REDIS_URL', async () => {
    const refused = await resolveRedisTarget({}, { REDIS_URL: 'redis://h:6379/x' }, noFile).catch(
      (error: unknown) => error,
    );
    expect((refused as CliError).message).toMatch(/^\$REDIS_URL redis:\/\/h:6379\/x: the database part "x"/);
  });

  it('the target knows its database, and the commands name it where they read', async () => {
    const two = await resolveRedisTarget({ redisUrl: 'redis://10.0.0.5:6379/2' }, {}, noFile);
    expect(two.database).toBe(2);
    expect(describeWhere(two)).toBe('10.0.0.5:6379 db 2');
    const zero = await resolveRedisTarget({}, { REDIS_URL: 'redis://10.0.0.5:6379' }, noFile);
    expect(describeWhere(zero)).toBe('10.0.0.5:6379 db 0');
  });
});
