import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { InboxClocks } from '../../../src/emulator/inbox-clocks.js';
import { QUEUE_NAMES } from '../../../src/queue/redis-keys.js';
import { burstField, parseBurstRegistration } from '../../../src/worker/bursts/burst-store.js';
import { type ConversationClocks, listConversationClocks } from '../../../src/worker/timers/list-timers.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { cli } from '../../support/cli-in-process.js';
import { createWorld, E2E, type World } from '../../support/e2e-world.js';
import { everyKeyAndValue, keysHolding } from '../../support/scan-redis.js';

/**
 * Issue 28, bursts, end to end: real `convo-bridge` processes from the build, the emulator, and
 * the shipped example config with one debounced rule added (the example's own rules answer none
 * of these messages).
 */

const REPLY = 'Terima kasih! Kami membaca {{burst.count}} pesan Anda dan segera membalas.';
const ANSWER = `  - name: answer-burst
    on: message_in
    debounce: 2s
    unless: agent_reply
    then:
      - reply: { text: "${REPLY}" }`;
// A second debounced rule that never answers, with a long debounce: its open burst can be looked
// at (timers list, the inbox page) without racing the 2 s rule.
const WATCH = `  - name: watch-burst
    on: message_in
    debounce: 30s
    if: { text: { any_keywords: [ xyzzy ] } }
    then: [ { note: "never" } ]`;
const FAST_RECOVERY = { lock_duration: '2s', stalled_interval: '1s' };

const replied = (count: number) => REPLY.replace('{{burst.count}}', String(count));

/** A conversation's open burst of a rule, as the bridge keeps it (undefined: none). */
async function openBurst(w: World, conversationId: string, rule: string) {
  const keys = w.layout.shardOf(conversationId).keys;
  const registration = parseBurstRegistration(
    await w.redis.hget(keys.conversation(conversationId), burstField(rule)),
  );
  return registration?.state === 'pending' ? registration : undefined;
}

async function burstOf(w: World, conversationId: string, rule: string, count: number) {
  return waitFor(
    async () => {
      const open = await openBurst(w, conversationId, rule);
      return open && open.burst.count === count ? open : undefined;
    },
    { timeoutMs: 10_000, what: `a burst of ${count} message(s) of ${rule} in ${conversationId}` },
  );
}

describe('bursts end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('three messages within a second get one reply naming the burst, shown in timers list and the inbox', async () => {
    let source: ((id: string) => Promise<InboxClocks | null>) | undefined;
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', extraRules: `${ANSWER}\n${WATCH}` }),
      emulator: { clocks: async (id) => (source ? source(id) : null) },
    });
    const w = world;
    // The conversation's shard (the cluster project runs this file on several).
    const shard = w.layout.shardOf('c-burst');
    const timersQueue = new Queue(QUEUE_NAMES.timers, { connection: w.redis, prefix: shard.queuePrefix });
    source = async (id) =>
      (await listConversationClocks(w.redis, shard.keys, timersQueue, { conversationId: id }))[0] ?? null;
    // WhatsApp Business API: the reply window applies, and the burst's reply goes through its guard.
    w.conversation('c-burst', { type: 'whatsapp_api', id: 'ch_waba_1' });
    w.say('c-burst', 'halo');
    await new Promise((resolve) => setTimeout(resolve, 300));
    w.say('c-burst', 'mau tanya');
    await new Promise((resolve) => setTimeout(resolve, 300));
    w.say('c-burst', 'pesanan saya belum sampai');
    const watched = await burstOf(w, 'c-burst', 'watch-burst', 3);
    expect(watched.burst.texts).toEqual(['halo', 'mau tanya', 'pesanan saya belum sampai']);

    const target = ['--config', w.configPath, '--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
    const listed = await cli(['timers', 'list', ...target, '--conversation', 'c-burst', '--json']);
    expect(listed.code).toBe(0);
    const clocks = JSON.parse(listed.stdout) as ConversationClocks[];
    expect(clocks[0]?.timers.find((t) => t.rule === 'watch-burst')).toMatchObject({
      timerId: watched.stored.id,
      trigger: 'burst',
      state: 'collecting 3 message(s)',
      dueAt: new Date(watched.stored.l + 30_000).toISOString(),
    });
    const page = await (await fetch(`${w.emulator.inboxUrl}?c=c-burst`)).text();
    expect(page).toMatch(
      /data-testid="bridge-timer">Burst <strong>watch-burst<\/strong> \(burst\) due \d{4}-\d{2}-\d{2}T[\d:.]+Z: collecting 3 message\(s\)/,
    );
    await timersQueue.close();

    await waitFor(() => w.apiMessages('c-burst').length === 1, {
      timeoutMs: 15_000,
      what: 'the burst reply',
    });
    await w.settled();
    expect(w.apiMessages('c-burst').map((m) => m.text)).toEqual([replied(3)]);
    expect(w.requests('send', 'c-burst')).toHaveLength(1);
    expect(w.notes('c-burst')).toEqual([]);
    // Fired: the burst's run state is gone; the rule's field keeps only the closed mark.
    const keys = w.layout.shardOf('c-burst').keys;
    expect(await w.redis.exists(keys.run(watched.stored.id))).toBe(0);
    expect(
      (await w.redis.hget(keys.conversation('c-burst'), burstField('answer-burst')))?.startsWith('c:'),
    ).toBe(true);
  });

  it('an agent reply cancels the open burst: no reply', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open', extraRules: ANSWER }) });
    const w = world;
    w.conversation('c-agent', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-agent', 'halo');
    w.say('c-agent', 'mau tanya');
    const open = await burstOf(w, 'c-agent', 'answer-burst', 2);
    w.admin.takeOver('c-agent', 'Rina');
    w.admin.agentReply('c-agent', 'Halo Kak, ada yang bisa dibantu?', 'Rina');
    await waitFor(async () => (await openBurst(w, 'c-agent', 'answer-burst')) === undefined, {
      timeoutMs: 10_000,
      what: 'the burst to be cancelled',
    });
    // Past the time it would have been due, with a margin: no reply from the bridge.
    await waitFor(() => Date.now() > open.stored.l + 4_000, {
      timeoutMs: 10_000,
      what: 'the due time to pass',
    });
    await w.settled();
    expect(w.apiMessages('c-agent')).toEqual([]);
    expect(await w.redis.exists(w.queueKey('c-agent', 'timers', open.stored.id))).toBe(0);
  });

  it('forget erases an open burst and a dead-lettered one: their texts leave Redis', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', extraRules: `${ANSWER}\n${WATCH}` }),
    });
    const w = world;
    const phone = `0812-${Date.now() % 10_000}-7788`;
    w.conversation('c-forget-open', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-forget-open', 'halo');
    w.say('c-forget-open', `nomor saya ${phone}`);
    const open = await burstOf(w, 'c-forget-open', 'watch-burst', 2);
    expect(open.burst.texts).toEqual(['halo', `nomor saya ${phone}`]);
    // A conversation the platform does not know: the burst's reply is refused for good, and its
    // dead letter keeps the burst (with the phone number) for a replay.
    const fixture = JSON.parse(
      await readFile(join('test', 'fixtures', 'webhooks', 'channel-message-in.json'), 'utf8'),
    );
    const response = await fetch(`http://127.0.0.1:${w.env.PORT}${E2E.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: E2E.webhookSecret },
      body: JSON.stringify({
        ...fixture,
        conversation_id: 'c-forget-dead',
        message: {
          ...fixture.message,
          id: `m-dead-${Date.now()}`,
          content: { type: 'text', text: `telpon ${phone}` },
        },
      }),
    });
    expect(response.status).toBe(200);
    await waitFor(async () => (await w.redis.zcard(w.keys.deadIndex)) === 1, {
      timeoutMs: 20_000,
      what: 'the refused burst reply to be dead-lettered',
    });
    await w.settled({ quietMs: 1_000 });
    expect(keysHolding(await everyKeyAndValue(w.redis), [phone]).size).toBeGreaterThan(2);
    const flags = ['--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
    const run = await cli([
      'forget',
      ...flags,
      '--conversation',
      'c-forget-open',
      '--conversation',
      'c-forget-dead',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/dead letters\s+1/);
    const left = keysHolding(await everyKeyAndValue(w.redis), [phone, 'c-forget-open', 'c-forget-dead']);
    expect(Object.fromEntries(left)).toEqual({});
    expect(await w.redis.exists(w.queueKey('c-forget-open', 'timers', open.stored.id))).toBe(0);
  });

  it('SIGKILL of the worker mid-burst, and again after it took the burst: exactly one reply', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', extraRules: ANSWER, worker: FAST_RECOVERY }),
      processes: ['serve', 'work'],
    });
    const w = world;
    const worker = () => {
      const found = w.bridges.find(
        (b) => b.proc.exitCode === null && b.logs.some((l) => l.includes('worker started')),
      );
      if (!found) throw new Error('no running worker');
      return found;
    };
    w.conversation('c-kill', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-kill', 'halo');
    w.say('c-kill', 'mau tanya');
    const open = await burstOf(w, 'c-kill', 'answer-burst', 2);
    // Killed while the burst is open; the third message reaches the receiver while no worker runs,
    // and the burst's due time passes meanwhile.
    expect(await worker().stop('SIGKILL')).toBeNull();
    w.say('c-kill', 'pesanan saya belum sampai');
    await waitFor(() => Date.now() > open.stored.l + 3_000, {
      timeoutMs: 10_000,
      what: 'the due time to pass',
    });
    // The platform refuses sends for now (500 before acting): the next worker takes the burst,
    // fails to send, and is killed while it waits to try again.
    w.admin.addFault({ type: 'error', endpoint: 'send', status: 500, mode: 'before' });
    await w.launch('work');
    await waitFor(() => w.requests('send', 'c-kill').length > 0, {
      timeoutMs: 20_000,
      what: 'a first (refused) send of the burst reply',
    });
    const keys = w.layout.shardOf('c-kill').keys;
    expect(await w.redis.hexists(keys.run(open.stored.id), 'burst')).toBe(1);
    expect(await worker().stop('SIGKILL')).toBeNull();
    w.admin.clearFaults();
    await w.launch('work');
    await waitFor(() => w.apiMessages('c-kill').length > 0, { timeoutMs: 20_000, what: 'the burst reply' });
    // A late copy would come from a job a killed worker held: lock 2 s + stalled check 1 s.
    await w.settled({ quietMs: 5_000 });
    expect(w.apiMessages('c-kill').map((m) => m.text)).toEqual([replied(3)]);
    expect(await w.redis.zcard(w.keys.deadIndex)).toBe(0);
  });
});
