import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, type World } from '../../support/e2e-world.js';

// Found by the fault-injection suite (test/faults, scenario 4): a customer who repeats a request
// within a few seconds gets the same note or reply twice. When the second one fails with an unknown
// outcome, reconciliation must not take the FIRST one (sent moments earlier, same text) for it.
const FAST = { backoff: '{ base: 200ms, max: 1s }' };

describe('reconciling an action whose text was just sent for the previous event', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  /**
   * The first send is known to have reached the platform, so the second needs no history read
   * before its call (its ledger entry counts the first); history is read only to reconcile the
   * failed call, after it. (The example's first-message rule reads it before the first send.)
   */
  const noHistoryReadBetweenSends = (w: World, endpoint: string, id: string) => {
    const [first, second] = w.requests(endpoint, id);
    expect(second?.faults.length).toBeGreaterThan(0);
    const between = w
      .requests('history', id)
      .filter((r) => r.seq > (first?.seq ?? 0) && r.seq < (second?.seq ?? 0));
    expect(between).toEqual([]);
  };

  const idle = (w: World, id: string) =>
    waitFor(async () => (await w.redis.zcard(w.keys.order(id))) === 0, {
      timeoutMs: 20_000,
      what: `conversation ${id} to have no event left`,
    });

  it.each([
    ['before', 'the send never reached the platform: the reply is sent after all'],
    ['after', 'the send reached the platform, then 500: found in history, not sent again'],
  ] as const)('catalog requested twice, second send fails %s acting: %s', async (mode, _why) => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open', worker: FAST }) });
    const w = world;
    w.conversation('c-rep', { type: 'telegram', id: 'ch_tg' });
    w.say('c-rep', 'Kirim katalog ya');
    await waitFor(() => w.apiMessages('c-rep').length === 1, { timeoutMs: 15_000, what: 'the first reply' });
    w.admin.addFault({ type: 'error', endpoint: 'send', status: 500, mode, times: 1 });
    w.say('c-rep', 'Kirim katalog ya');
    await waitFor(() => w.requests('send', 'c-rep').some((r) => r.faults.length > 0), {
      timeoutMs: 15_000,
      what: 'the fault to fire on the second send',
    });
    await idle(w, 'c-rep');
    noHistoryReadBetweenSends(w, 'send', 'c-rep');
    expect(w.apiMessages('c-rep').map((m) => m.text)).toEqual([
      'https://cdn.example.com/katalog.pdf',
      'https://cdn.example.com/katalog.pdf',
    ]);
  });

  it.each([['before'], ['after']] as const)(
    'the same complaint twice, second note fails %s acting: two notes, not one or three',
    async (mode) => {
      world = await createWorld({ config: await exampleConfig({ hours: 'open', worker: FAST }) });
      const w = world;
      w.conversation('c-note', { type: 'webchat', id: 'ch_web' });
      w.say('c-note', 'Saya mau refund');
      await waitFor(() => w.notes('c-note').length === 1, { timeoutMs: 15_000, what: 'the first note' });
      w.admin.addFault({ type: 'error', endpoint: 'note', status: 500, mode, times: 1 });
      w.say('c-note', 'Saya mau refund');
      await waitFor(() => w.requests('note', 'c-note').some((r) => r.faults.length > 0), {
        timeoutMs: 15_000,
        what: 'the fault to fire on the second note',
      });
      await idle(w, 'c-note');
      noHistoryReadBetweenSends(w, 'note', 'c-note');
      const note = "Escalated by escalate-complaints: customer wrote 'refund'";
      expect(w.notes('c-note')).toEqual([note, note]);
    },
  );
});
