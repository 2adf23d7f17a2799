import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businessNaming } from '../../../src/events/business-naming.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { cli } from '../../support/cli-in-process.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const configText = (redisUrl: string, prefix: string) => `
platform: { form: current }
redis: { url: "${redisUrl}", prefix: ${prefix} }
rules: []
businesses:
  - id: toko-a
    platform: { base_url: "https://a.invalid", auth: { business_id: biz-a, secret: sk-a } }
`;

/**
 * `forget --customer` where the only thing that held the address was a quarantined body naming no
 * conversation: one answer, which says that body was erased (a record of the erasure must not read
 * "nothing to forget"). Real Redis, the command in process.
 */
describe('forget --customer held only by a quarantined body', () => {
  let dir: string;
  let config: string;
  let redis: Redis;
  const prefix = uniqueName('t-forget-q');
  const layout = createKeyLayout({ prefix, shards: 1, tagged: false });
  const forget = (...extra: string[]) =>
    cli(['forget', '--customer', 'siti@example.org', '--business', 'toko-a', '--config', config, ...extra]);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'forget-quarantine-'));
    config = join(dir, 'agency.yaml');
    await writeFile(config, configText(testRedisUrl(), prefix));
    redis = connectTestRedis();
    await quarantineBody(
      { redis, keys: layout.forNaming(businessNaming('toko-a', false)).global },
      {
        rawBody: Buffer.from('{"event":"channel.unheard_of","from":"siti@example.org"}'),
        reason: 'unknown_event',
        message: 'unknown event name',
        eventName: 'channel.unheard_of',
        conversationId: null,
        receivedAt: new Date(),
      },
    );
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  });

  it('--dry-run, then the erasure, then again: each prints one consistent answer', async () => {
    const dry = await forget('--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      'customer "siti@example.org": held by 0 conversation(s), and 1 quarantined body(ies) naming no conversation (would erase)\n' +
        'no stored conversation holds that customer: the 1 quarantined body(ies) above are all the bridge held about them (would erase)\n',
    );

    const done = await forget();
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      'customer "siti@example.org": held by 0 conversation(s), and 1 quarantined body(ies) naming no conversation (erased)\n' +
        'no stored conversation holds that customer: the 1 quarantined body(ies) above were all the bridge held about them (erased)\n',
    );
    expect(done.stdout).not.toContain('nothing to forget');

    const again = await forget();
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      'customer "siti@example.org": held by 0 conversation(s)\n' +
        'nothing to forget: no stored conversation or quarantined body holds that customer\n',
    );
  });
});
