import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgencyWorld, createAgencyWorld } from '../../support/agency-world.js';
import { cli } from '../../support/cli-in-process.js';

/**
 * `forget --customer` where the only thing that held the address was a quarantined body naming no
 * conversation: one answer, which says that body was erased (a record of the erasure must not read
 * "nothing to forget"). Real Redis, the command in process.
 */
describe('forget --customer held only by a quarantined body', () => {
  let world: AgencyWorld;
  const forget = (...extra: string[]) =>
    cli([
      'forget',
      '--customer',
      'siti@example.org',
      '--business',
      'toko-a',
      '--config',
      world.config,
      ...extra,
    ]);

  beforeAll(async () => {
    world = await createAgencyWorld('t-forget-q', ['toko-a']);
    await world.quarantineUnknown(
      'toko-a',
      'channel.unheard_of',
      '{"event":"channel.unheard_of","from":"siti@example.org"}',
    );
  });
  afterAll(async () => {
    await world.close();
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
