import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { TEST_CLOCK_ENV } from '../../../src/bridge/test-clock.js';
import type { InboxClocks } from '../../../src/emulator/inbox-clocks.js';
import { QUEUE_NAMES } from '../../../src/queue/redis-keys.js';
import { type ConversationClocks, listConversationClocks } from '../../../src/worker/timers/list-timers.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { cli } from '../../support/cli-in-process.js';
import { createWorld, type World } from '../../support/e2e-world.js';

/**
 * Issue 16 end to end: `on: window_closing` with a shortened window (hours: 0.01 = 36 s,
 * before: 30s: it fires 6 s after a customer message), timers in business time under a shifted
 * clock, and a platform that echoes the bridge's own sends.
 */

const WARN_NOTE = 'Window closes soon: answer now for free';
const windowClosing = (before: string) => `  - name: warn-window
    on: window_closing
    before: ${before}
    then:
      - need_human: true
      - note: "${WARN_NOTE}"`;

async function shortWindowConfig(before = '30s'): Promise<string> {
  const text = await exampleConfig({ hours: 'open', extraRules: windowClosing(before) });
  return text.replace('  hours: 24\n', '  hours: 0.01\n');
}

/** The delayed job of a timer, as the worker stored it. */
/** A timer's delayed job. The registration is written before the job is added, so wait for the job. */
async function timerJob(w: World, timerId: string) {
  const data = await waitFor(
    async () => (await w.redis.hget(`${w.prefix}:timers:${timerId}`, 'data')) ?? undefined,
    { timeoutMs: 10_000, what: `the job of timer ${timerId}` },
  );
  return JSON.parse(data) as { dueAt: string; rule: string; trigger?: string };
}

async function armedTimer(w: World, conversationId: string, other?: string): Promise<string> {
  let found = '';
  await waitFor(
    async () => {
      const ids = await w.timerIds(conversationId);
      found = ids.find((id) => id !== other) ?? '';
      return ids.length === 1 && found !== '';
    },
    { timeoutMs: 10_000, what: `a window_closing timer in ${conversationId}` },
  );
  return found;
}

describe('conversation clocks end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('window_closing fires once, before: ahead of the window end; a new customer message re-arms it', async () => {
    // The inbox page shows the bridge's clocks through a source the test wires, as the CLI's
    // --clocks-config does (the emulator knows nothing of the bridge).
    let source: ((id: string) => Promise<InboxClocks | null>) | undefined;
    world = await createWorld({
      config: await shortWindowConfig(),
      emulator: { clocks: async (id) => (source ? source(id) : null) },
    });
    const w = world;
    const timersQueue = new Queue(QUEUE_NAMES.timers, { connection: w.redis, prefix: w.prefix });
    source = async (id) =>
      (await listConversationClocks(w.redis, w.keys, timersQueue, { conversationId: id }))[0] ?? null;
    w.conversation('c-warn', { type: 'whatsapp_api', id: 'ch_waba_1' });
    w.say('c-warn', 'Halo');
    const first = await armedTimer(w, 'c-warn');
    expect((await timerJob(w, first))?.trigger).toBe('window_closing');
    const page = await (await fetch(`${w.emulator.inboxUrl}?c=c-warn`)).text();
    expect(page).toMatch(/data-testid="platform-window">Reply window: closes \d{4}-/);
    expect(page).toMatch(
      /data-testid="bridge-timer">Timer <strong>warn-window<\/strong> \(window_closing\) due \w{3} \d{4}-\d{2}-\d{2} \d{2}:\d{2} Asia\/Jakarta: pending/,
    );
    await timersQueue.close();
    // A second message 2 s later: the first timer is cancelled, a new one is due 6 s after it.
    await waitFor(async () => Date.now() > Date.parse((await timerJob(w, first))?.dueAt ?? '0') - 4_000, {
      timeoutMs: 10_000,
      what: '2 s to pass',
    });
    const secondAt = Date.now();
    w.say('c-warn', 'Masih ada?');
    const second = await armedTimer(w, 'c-warn', first);
    expect(await w.timerIds('c-warn')).toEqual([second]);
    const due = Date.parse((await timerJob(w, second))?.dueAt ?? '');
    expect(due).toBeGreaterThanOrEqual(secondAt + 5_000);
    await waitFor(() => w.notes('c-warn').length > 0, { timeoutMs: 20_000, what: 'the window_closing note' });
    expect(Date.now()).toBeGreaterThanOrEqual(due - 50);
    // Fired: its registration is released; past both due times there is still one note.
    await waitFor(async () => (await w.timerIds('c-warn')).length === 0, {
      timeoutMs: 10_000,
      what: 'the fired timer to be released',
    });
    await waitFor(() => Date.now() > due + 2_000, { timeoutMs: 5_000, what: 'time to pass the due time' });
    expect(w.notes('c-warn')).toEqual([WARN_NOTE]);
    expect(w.detail('c-warn').needHuman).toBe(true);
  });

  it('an agent reply cancels window_closing; a channel without a window arms none', async () => {
    world = await createWorld({ config: await shortWindowConfig() });
    const w = world;
    w.conversation('c-answered', { type: 'whatsapp_api', id: 'ch_waba_1' });
    w.conversation('c-qr', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-answered', 'Halo');
    w.say('c-qr', 'Halo');
    const timerId = await armedTimer(w, 'c-answered');
    const due = Date.parse((await timerJob(w, timerId))?.dueAt ?? '');
    // Visible clocks: `timers list` shows the timer and when the window closes (30 s after it).
    const target = ['--config', w.configPath, '--redis-url', w.env.REDIS_URL ?? '', '--prefix', w.prefix];
    const listed = await cli(['timers', 'list', ...target, '--json']);
    expect(listed.code).toBe(0);
    const clocks = JSON.parse(listed.stdout) as ConversationClocks[];
    expect(clocks.map((c) => c.conversationId)).toEqual(['c-answered']);
    expect(clocks[0]?.timers).toMatchObject([
      {
        timerId,
        rule: 'warn-window',
        trigger: 'window_closing',
        state: 'pending (cancelled by message_in,agent_reply)',
      },
    ]);
    expect(clocks[0]?.window).toMatchObject({ applies: true, channelKind: 'whatsapp_api' });
    expect(Date.parse(clocks[0]?.window.closesAt ?? '') - due).toBe(30_000);
    const table = await cli(['timers', 'list', ...target]);
    expect(table.stdout).toMatch(/^1 pending timer\(s\) in 1 conversation\(s\)/);
    expect(table.stdout).toMatch(
      /c-answered\s+\w{3} \d{4}-\d{2}-\d{2} \d{2}:\d{2} Asia\/Jakarta\s+.*warn-window\s+window_closing\s+pending/,
    );
    w.admin.takeOver('c-answered', 'Rina');
    w.admin.agentReply('c-answered', 'Halo Kak, ada yang bisa dibantu?', 'Rina');
    await waitFor(
      async () =>
        (await w.timerIds('c-answered')).length === 0 &&
        (await w.redis.exists(`${w.prefix}:timers:${timerId}`)) === 0,
      { timeoutMs: 10_000, what: 'the agent reply to cancel the timer and remove its job' },
    );
    await waitFor(() => Date.now() > due + 2_000, { timeoutMs: 15_000, what: 'the due time to pass' });
    expect(w.notes('c-answered')).toEqual([]);
    expect(await w.timerIds('c-qr')).toEqual([]);
    expect(w.notes('c-qr')).toEqual([]);
  });

  it('survives a restart of the bridge between arming and firing', async () => {
    world = await createWorld({ config: await shortWindowConfig('28s') });
    const w = world;
    w.conversation('c-restart', { type: 'whatsapp_api', id: 'ch_waba_1' });
    w.say('c-restart', 'Halo');
    const timerId = await armedTimer(w, 'c-restart');
    const due = Date.parse((await timerJob(w, timerId))?.dueAt ?? '');
    const [bridge] = w.bridges;
    expect(await bridge?.stop('SIGTERM')).toBe(0);
    // Down past the due time: nothing can fire it.
    await waitFor(() => Date.now() > due + 500, { timeoutMs: 15_000, what: 'the due time to pass' });
    expect(w.notes('c-restart')).toEqual([]);
    await w.launch('start');
    await waitFor(() => w.notes('c-restart').length > 0, {
      timeoutMs: 20_000,
      what: 'the note after the restart',
    });
    await waitFor(async () => (await w.timerIds('c-restart')).length === 0, {
      timeoutMs: 10_000,
      what: 'the fired timer to be released',
    });
    expect(w.notes('c-restart')).toEqual([WARN_NOTE]);
    expect(w.requests('needHuman', 'c-restart')).toHaveLength(1);
  });

  it('with the platform echoing API sends, the bridge’s own reply cancels no timer and triggers no agent rule', async () => {
    const rules = `  - name: ack
    on: message_in
    if: { text: { any_keywords: [ tolong ] } }
    then:
      - reply: { text: "Baik Kak, pesan Anda kami terima." }
      - after: 3s
        unless: agent_reply
        then: [ { note: "No agent reply 3 s after the acknowledgement." } ]
  - name: agent-answered
    on: agent_reply
    then: [ { note: "An agent answered." } ]`;
    world = await createWorld({
      // Done jobs kept: the test reads what the echo's run returned.
      config: await exampleConfig({ hours: 'open', extraRules: rules, retention: { done_events: '1h' } }),
      emulator: { echoApiSends: true },
    });
    const w = world;
    w.conversation('c-echo', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-echo', 'tolong bantu saya');
    await waitFor(() => w.apiMessages('c-echo').length === 1, {
      timeoutMs: 10_000,
      what: 'the acknowledgement',
    });
    const [sent] = w.apiMessages('c-echo');
    // The platform reported it back as an agent reply...
    await waitFor(
      () =>
        w.admin.deliveries().some((d) => d.conversationId === 'c-echo' && d.event === 'agent.message_out'),
      { timeoutMs: 10_000, what: 'the echo webhook' },
    );
    const echoKey = `agent.message_out|${sent?.messageId}`;
    await waitFor(async () => (await w.eventRun(echoKey))?.result !== undefined, {
      timeoutMs: 10_000,
      what: 'the echo to be processed',
    });
    // ...which the bridge knew for its own: no timer cancelled, no rule run.
    expect((await w.eventRun(echoKey))?.result).toMatchObject({
      ownSend: true,
      cancelledTimers: [],
      matched: [],
    });
    await waitFor(() => w.notes('c-echo').length > 0, { timeoutMs: 15_000, what: 'the escalation note' });
    expect(w.notes('c-echo')).toEqual(['No agent reply 3 s after the acknowledgement.']);
    // A human agent's reply (not one of ours) still runs the agent rule.
    w.admin.takeOver('c-echo', 'Rina');
    w.admin.agentReply('c-echo', 'Saya bantu ya Kak', 'Rina');
    await waitFor(() => w.notes('c-echo').length === 2, { timeoutMs: 10_000, what: 'the agent rule note' });
    expect(w.notes('c-echo')[1]).toBe('An agent answered.');
    // No loop: one reply only.
    expect(w.apiMessages('c-echo')).toHaveLength(1);
  });

  it('the earlier form: an echoed API send (message.sent) is recognised too', async () => {
    const rules = `  - name: ack
    on: message_in
    if: { text: { any_keywords: [ tolong ] } }
    then:
      - reply: { text: "Baik Kak, kami bantu." }
      - after: 3s
        unless: message_sent
        then: [ { note: "Nobody answered after the acknowledgement." } ]`;
    world = await createWorld({
      // The earlier form authenticates with the secret alone.
      config: (await exampleConfig({ hours: 'open', extraRules: rules, retention: { done_events: '1h' } }))
        .replace('form: current', 'form: earlier')
        .replace('scheme: headers', 'scheme: bearer-secret'),
      form: 'earlier',
      emulator: { echoApiSends: true },
    });
    const w = world;
    w.conversation('c-echo-earlier', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-echo-earlier', 'tolong');
    await waitFor(() => w.apiMessages('c-echo-earlier').length === 1, {
      timeoutMs: 10_000,
      what: 'the reply',
    });
    const [sent] = w.apiMessages('c-echo-earlier');
    const echoKey = `message.sent|${sent?.messageId}`;
    await waitFor(async () => (await w.eventRun(echoKey))?.result !== undefined, {
      timeoutMs: 10_000,
      what: 'the message.sent echo to be processed',
    });
    expect((await w.eventRun(echoKey))?.result).toMatchObject({ ownSend: true, cancelledTimers: [] });
    await waitFor(() => w.notes('c-echo-earlier').length > 0, { timeoutMs: 15_000, what: 'the timer note' });
    expect(w.notes('c-echo-earlier')).toEqual(['Nobody answered after the acknowledgement.']);
  });

  it('a business-time timer fires at the expected instant under a shifted clock (Friday 17:00:45, split shift)', async () => {
    // The bridge's clock reads Friday 2026-11-20 17:00:45 WIB now; hours close 17:00-17:01.
    const fakeStart = Date.parse('2026-11-20T17:00:45+07:00');
    const offset = fakeStart - Date.now();
    const rules = `  - name: sla
    on: message_in
    if: { text: { any_keywords: [ sla ] } }
    then:
      - after: 5s
        clock: business
        unless: agent_reply
        then: [ { note: "5 business seconds without an agent reply" } ]`;
    let config = await exampleConfig({ hours: 'open', extraRules: rules });
    config = config.replace(
      /business_hours:\n(?: {2}.*\n)+/,
      'business_hours:\n  weekly: { fri: [ "08:00-17:00", "17:01-18:00" ] }\n',
    );
    world = await createWorld({ config, env: { [TEST_CLOCK_ENV]: String(offset) } });
    const w = world;
    w.conversation('c-biz', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    expect(Date.now() + offset, 'the message must reach the bridge before 17:01 on its clock').toBeLessThan(
      Date.parse('2026-11-20T17:00:58+07:00'),
    );
    w.say('c-biz', 'cek sla');
    let timerId = '';
    await waitFor(
      async () => {
        timerId = (await w.timerIds('c-biz'))[0] ?? '';
        return timerId !== '';
      },
      { timeoutMs: 10_000, what: 'the business-time timer' },
    );
    // 5 business seconds from a closed moment: the split shift reopens at 17:01, so 17:01:05.
    const job = await timerJob(w, timerId);
    expect(job?.dueAt).toBe('2026-11-20T10:01:05.000Z');
    const expectedReal = Date.parse('2026-11-20T10:01:05.000Z') - offset;
    await waitFor(() => w.notes('c-biz').includes('5 business seconds without an agent reply'), {
      timeoutMs: 30_000,
      what: 'the business-time note',
    });
    const firedAt = Date.now();
    expect(firedAt).toBeGreaterThanOrEqual(expectedReal - 50);
    expect(firedAt).toBeLessThan(expectedReal + 5_000);
  });
});
