import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDeadLetter } from '../../../src/worker/failures/dead-letters.js';
import { createTimerScheduler } from '../../../src/worker/timers/timers.js';
import { type AgencyWorld, createAgencyWorld } from '../../support/agency-world.js';
import { cli } from '../../support/cli-in-process.js';
import { deadLetterFixture } from '../../support/dead-letter-fixture.js';
import { makeEvent } from '../../support/make-event.js';

const deadLetter = (id: string, conversationId: string) =>
  deadLetterFixture(id, conversationId, { jobName: 'events', eventKey: `toko-a:channel.message_in|${id}` });

/**
 * The operator commands of a bridge of several businesses (issue 26): `--business ID` reads that
 * business's dead letters, quarantine and timers, never another's; without it they stop naming the
 * ids; reshard, which works on every business at once, refuses it. Real Redis, commands in process.
 */
describe('dlq, quarantine and timers with --business', () => {
  let world: AgencyWorld;
  let config: string;

  beforeAll(async () => {
    world = await createAgencyWorld('t-ops-biz', ['toko-a', 'toko-b']);
    config = world.config;
    const { redis, prefix } = world;
    await addDeadLetter(redis, world.keysOf('toko-a'), deadLetter('ev-a-1', 'conv-1'));
    await world.quarantineUnknown(
      'toko-b',
      'channel.message_reaction',
      '{"event":"channel.message_reaction"}',
    );
    const timers = new Queue('timers', { connection: redis, prefix });
    const schedule = createTimerScheduler(redis, world.keysOf('toko-b'), timers);
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
    await world.close();
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
