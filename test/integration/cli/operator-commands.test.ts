import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeKeys } from '../../../src/queue/redis-keys.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { addDeadLetter, type DeadLetter } from '../../../src/worker/failures/dead-letters.js';
import { cli } from '../../support/cli-in-process.js';
import { deadLetterFixture } from '../../support/dead-letter-fixture.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';
import { runNode } from '../../support/run-node.js';

const CLI = join(process.cwd(), 'dist', 'cli.js');

/** The built CLI as an operator runs it; the run is killed after `timeoutMs` (a hang fails the test). */
const runBuilt = (args: string[], timeoutMs = 15_000) =>
  runNode([CLI, ...args], { ...process.env, REDIS_URL: '', CONVO_BRIDGE_CONFIG: '' }, timeoutMs);

const deadLetter = (id: string, conversationId: string) =>
  deadLetterFixture(id, conversationId, {
    reason: 'the platform refused 1 action(s): escalate-complaints#0 (conversation not found)',
  });

const configText = (redisUrl: string, prefix: string) => `
platform: { base_url: "\${PLATFORM_BASE_URL}", auth: { scheme: headers, business_id: b, secret: "\${SECRET_KEY}" } }
receiver: { secrets: [ "\${WEBHOOK_SECRET}" ] }
redis: { url: "${redisUrl}", prefix: ${prefix} }
`;

describe('dlq and quarantine find Redis the same way: --config first, then --redis-url', () => {
  let dir: string;
  let redis: Redis;
  const prefix = uniqueName('t-ops');
  let reachable: string;
  let unreachable: string;
  let unreachablePort: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-commands-'));
    redis = connectTestRedis();
    await addDeadLetter(redis, bridgeKeys(prefix), deadLetter('ev-one-1', 'conv-a'));
    await addDeadLetter(redis, bridgeKeys(prefix), deadLetter('ev-two-2', 'conv-b'));
    await quarantineBody(
      { redis, keys: bridgeKeys(prefix) },
      {
        rawBody: Buffer.from('{"event":"channel.message_reaction"}'),
        reason: 'unknown_event',
        message: 'unknown event name',
        eventName: 'channel.message_reaction',
        conversationId: null,
        receivedAt: new Date(),
      },
    );
    reachable = join(dir, 'reachable.yaml');
    await writeFile(reachable, configText(testRedisUrl(), prefix));
    unreachablePort = await findFreePort();
    unreachable = join(dir, 'unreachable.yaml');
    await writeFile(unreachable, configText(`redis://127.0.0.1:${unreachablePort}`, prefix));
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['dlq', 'list'],
    ['quarantine', 'list'],
  ])(
    '%s %s --config F with F naming an unreachable Redis exits 2 within 10 s naming that address',
    async (command, sub) => {
      const result = await runBuilt([command, sub, '--config', unreachable]);
      expect(result.code).toBe(2);
      expect(result.ms).toBeLessThan(10_000);
      expect(result.stderr).toContain(
        `cannot reach Redis at 127.0.0.1:${unreachablePort} (from ${unreachable} (redis.url))`,
      );
    },
  );

  it('dlq list --config F lists that Redis dead letters under the config prefix, with column headers', async () => {
    // The config's secrets are not needed to read dead letters: unset ${VAR}s are fine here.
    const result = await runBuilt(['dlq', 'list', '--config', reachable]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^2 dead letter\\(s\\) under prefix "${prefix}" at 127\\.0\\.0\\.1:\\d+ db 0$`),
    );
    expect(lines[1]).toMatch(/^ID +FAILED AT +QUEUE +CODE +CONVERSATION +REASON$/);
    expect(
      lines
        .slice(2)
        .map((line) => line.split(/\s+/)[0])
        .sort(),
    ).toEqual(['ev-one-1', 'ev-two-2']);
  });

  it('a config path that does not exist is an error, not a silent fallback to localhost', async () => {
    const missing = join(dir, 'nope.yaml');
    for (const command of ['dlq', 'quarantine']) {
      const result = await cli([command, 'list', '--config', missing]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${missing}:1:1: cannot load the config: the file does not exist`);
    }
  });

  it('without a config nor --redis-url nor $REDIS_URL, says how to name the Redis', async () => {
    const result = await runBuilt(['dlq', 'list'], 10_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no Redis given: pass --config FILE');
  });

  it('a wrong prefix gives a hint naming the prefixes that do hold entries', async () => {
    const wrong = uniqueName('t-ops-wrong');
    const dlq = await cli(['dlq', 'list', '--redis-url', testRedisUrl(), '--prefix', wrong]);
    expect(dlq.code).toBe(0);
    expect(dlq.stdout).toContain(`no dead letters under prefix "${wrong}"`);
    expect(dlq.stdout).toContain(`"${prefix}"`);
    expect(dlq.stdout).toContain('pass --prefix');
    const quarantine = await cli(['quarantine', 'list', '--redis-url', testRedisUrl(), '--prefix', wrong]);
    expect(quarantine.stdout).toContain(`no quarantined bodies under prefix "${wrong}"`);
    expect(quarantine.stdout).toContain(`"${prefix}"`);
  });

  it('--redis-url and --prefix override the config; both commands accept them before or after the subcommand', async () => {
    const before = await cli([
      'dlq',
      '--config',
      unreachable,
      '--redis-url',
      testRedisUrl(),
      'list',
      '--json',
    ]);
    const after = await cli([
      'quarantine',
      'list',
      '--json',
      '--config',
      unreachable,
      '--redis-url',
      testRedisUrl(),
    ]);
    expect(before.code).toBe(0);
    expect(after.code).toBe(0);
    // Both print one JSON array.
    expect((JSON.parse(before.stdout) as DeadLetter[]).map((e) => e.id).sort()).toEqual([
      'ev-one-1',
      'ev-two-2',
    ]);
    expect(JSON.parse(after.stdout)).toHaveLength(1);
  });

  it('purge needs an id or --all in both commands', async () => {
    for (const command of ['dlq', 'quarantine']) {
      const result = await cli([command, 'purge', '--config', reachable]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('or pass --all');
    }
  });
});
