import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businessNaming } from '../../../src/events/business-naming.js';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { addDeadLetter } from '../../../src/worker/failures/dead-letters.js';
import { createTimerScheduler } from '../../../src/worker/timers/timers.js';
import { cli } from '../../support/cli-in-process.js';
import { deadLetterFixture } from '../../support/dead-letter-fixture.js';
import { makeEvent } from '../../support/make-event.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const deadLetter = (id: string, conversationId: string) =>
  deadLetterFixture(id, conversationId, { jobName: 'events', eventKey: `toko-a:channel.message_in|${id}` });

const configText = (redisUrl: string, prefix: string) => `
platform: { form: current }
redis: { url: "${redisUrl}", prefix: ${prefix} }
rules: []
businesses:
  - id: toko-a
    platform: { base_url: "https://a.invalid", auth: { business_id: biz-a, secret: sk-a } }
  - id: toko-b
    platform: { base_url: "https://b.invalid", auth: { business_id: biz-b, secret: sk-b } }
`;

/**
 * The operator commands of a bridge of several businesses (issue 26): `--business ID` reads that
 * business's dead letters, quarantine and timers, never another's; without it they stop naming the
 * ids; reshard, which works on every business at once, refuses it. Real Redis, commands in process.
 */
describe('dlq, quarantine and timers with --business', () => {
  let dir: string;
  let config: string;
  let redis: Redis;
  const prefix = uniqueName('t-ops-biz');
  const layout = createKeyLayout({ prefix, shards: 1, tagged: false });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-businesses-'));
    config = join(dir, 'agency.yaml');
    await writeFile(config, configText(testRedisUrl(), prefix));
    redis = connectTestRedis();
    await addDeadLetter(
      redis,
      layout.forNaming(businessNaming('toko-a', false)).global,
      deadLetter('ev-a-1', 'conv-1'),
    );
    await quarantineBody(
      { redis, keys: layout.forNaming(businessNaming('toko-b', false)).global },
      {
        rawBody: Buffer.from('{"event":"channel.message_reaction"}'),
        reason: 'unknown_event',
        message: 'unknown event name',
        eventName: 'channel.message_reaction',
        conversationId: null,
        receivedAt: new Date(),
      },
    );
    const timers = new Queue('timers', { connection: redis, prefix });
    const schedule = createTimerScheduler(
      redis,
      layout.forNaming(businessNaming('toko-b', false)).global,
      timers,
    );
    await schedule.schedule({
      timerId: 'tm-b-1',
      conversationId: 'conv-1',
      delayMs: 3_600_000,
      unless: ['agent_reply'],
      actions: [],
      event: makeEvent({ conversationId: 'conv-1' }),
      rule: 'follow-up',
    });
    await timers.close();
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists a business's dead letters, and none of another's", async () => {
    const a = await cli(['dlq', 'list', '--config', config, '--business', 'toko-a']);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('ev-a-1');
    const b = await cli(['dlq', 'list', '--config', config, '--business', 'toko-b']);
    expect(b.code).toBe(0);
    expect(b.stdout).not.toContain('ev-a-1');
  });

  it("lists a business's quarantine, and none of another's", async () => {
    const b = await cli(['quarantine', 'list', '--config', config, '--business', 'toko-b']);
    expect(b.stdout).toContain('channel.message_reaction');
    const a = await cli(['quarantine', 'list', '--config', config, '--business', 'toko-a']);
    expect(a.stdout).not.toContain('channel.message_reaction');
  });

  it("lists a business's timers from the shared timers queue, and none of another's", async () => {
    const b = await cli(['timers', 'list', '--config', config, '--business', 'toko-b', '--json']);
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout)).toMatchObject([
      { conversationId: 'conv-1', timers: [{ timerId: 'tm-b-1' }] },
    ]);
    const a = await cli(['timers', 'list', '--config', config, '--business', 'toko-a', '--json']);
    expect(JSON.parse(a.stdout)).toEqual([]);
  });

  it('stops without --business, naming the ids; refuses an id the config does not have', async () => {
    const none = await cli(['dlq', 'list', '--config', config]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/2 businesses: say which with --business ID, one of toko-a, toko-b/);
    const wrong = await cli(['dlq', 'list', '--config', config, '--business', 'toko-z']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('toko-z');
  });

  it('reshard works on every business at once and refuses --business', async () => {
    const result = await cli(['reshard', '--to', '1', '--check', '--config', config, '--business', 'toko-a']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--business does not apply here');
  });
});
