import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, itOffCluster, type World } from '../../support/e2e-world.js';

/** One sample of the bridge's /metrics, by its full name with labels; 0 when absent. */
async function metricValue(w: World, sample: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${w.env.PORT}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

describe('timers, the 24-hour window and redeliveries end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('the escalation timer fires when no agent replies: a note and a second CRM forward', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open', timer: '2s' }) });
    const w = world;
    w.conversation('c-sla', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-sla', 'Saya mau komplain');
    await waitFor(() => w.notes('c-sla').length === 2, { timeoutMs: 15_000, what: 'the timer note' });
    expect(w.notes('c-sla')).toEqual([
      "Escalated by escalate-complaints: customer wrote 'komplain'",
      'No agent reply 15 minutes after escalation.',
    ]);
    await waitFor(() => w.crm.forConversation('c-sla').length === 2, {
      timeoutMs: 10_000,
      what: 'the second forward',
    });
    // A timer fired twice would show in the quiet period after the queue drained.
    await w.settled();
    expect(w.notes('c-sla')).toHaveLength(2);
    expect(w.crm.forConversation('c-sla')).toHaveLength(2);
    const ids = new Set(w.crm.forConversation('c-sla').map((r) => r.webhookId));
    expect(ids.size).toBe(2);
    // The fired timer's registration goes once its actions are done.
    await waitFor(async () => (await w.timerIds('c-sla').then((t) => t.length)) === 0, {
      timeoutMs: 10_000,
      what: 'the timer registration to be released',
    });
  });

  it('an agent reply before the timer is due cancels it', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open', timer: '3s' }) });
    const w = world;
    w.conversation('c-agent', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    const escalated = Date.now();
    w.say('c-agent', 'Saya marah sekali');
    await waitFor(async () => (await w.timerIds('c-agent').then((t) => t.length)) === 1, {
      timeoutMs: 10_000,
      what: 'the timer to be set',
    });
    const [timerId] = await w.timerIds('c-agent');
    w.admin.takeOver('c-agent', 'Rina');
    w.admin.agentReply('c-agent', 'Mohon maaf Kak, kami cek sekarang.', 'Rina');
    // The agent_reply event cancels the timer: its registration and its delayed job are gone.
    await waitFor(
      async () =>
        (await w.timerIds('c-agent').then((t) => t.length)) === 0 &&
        (await w.redis.exists(w.queueKey('c-agent', 'timers', timerId ?? ''))) === 0,
      { timeoutMs: 10_000, what: 'the timer registration and its delayed job to be gone' },
    );
    // Past the time it would have fired (3 s after escalation, plus a margin): still one note only.
    await waitFor(() => Date.now() > escalated + 5_000, { timeoutMs: 10_000, what: 'the due time to pass' });
    expect(w.notes('c-agent')).toEqual(["Escalated by escalate-complaints: customer wrote 'marah'"]);
    expect(w.crm.forConversation('c-agent')).toHaveLength(1);
  });

  it('4 deliveries of one event (the platform retrying) give one note and one need-human call', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const w = world;
    w.conversation('c-dup', { type: 'instagram', id: 'ch_ig' });
    w.say('c-dup', 'Tolong refund pesanan saya');
    await waitFor(() => w.crm.forConversation('c-dup').length === 1, {
      timeoutMs: 10_000,
      what: 'the first delivery to be processed (its last action is the forward)',
    });
    const original = w.admin.deliveries().find((d) => d.conversationId === 'c-dup');
    if (!original) throw new Error('no delivery recorded');
    // Three more deliveries of the same event, two of them at the same time.
    w.admin.redeliver(original.id);
    w.admin.redeliver(original.id);
    w.admin.redeliver(original.id);
    await w.admin.deliveriesSettled();
    await w.settled();
    const copies = w.admin.deliveries().filter((d) => d.conversationId === 'c-dup');
    expect(copies).toHaveLength(4);
    expect(copies.map((d) => d.state)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect(w.notes('c-dup')).toHaveLength(1);
    expect(w.requests('note', 'c-dup')).toHaveLength(1);
    expect(w.requests('needHuman', 'c-dup')).toHaveLength(1);
    expect(w.crm.forConversation('c-dup')).toHaveLength(1);
  });

  it('a reply 25 h after the last WhatsApp-API message is never sent; when_closed runs instead', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'closed' }) });
    const w = world;
    // The example maps engine whatsapp + channel ch_waba_1 to whatsapp_api, where the window applies.
    w.conversation('c-late', { type: 'whatsapp_api', id: 'ch_waba_1' }, 'Andi');
    // A customer message from 25 hours ago reaches the bridge only now (after-hours would reply).
    w.say('c-late', 'Halo, masih buka?', '25h');
    await waitFor(() => w.notes('c-late').length === 1 && w.detail('c-late').needHuman, {
      timeoutMs: 10_000,
      what: 'the when_closed note and need-human',
    });
    await w.settled();
    expect(w.notes('c-late')).toHaveLength(1);
    expect(w.notes('c-late')[0]).toMatch(
      /^Reply not sent: the 24-hour window is closed \(1h( \d+m)?\)\. Use a template\.$/,
    );
    expect(w.detail('c-late').needHuman).toBe(true);
    expect(w.requests('send', 'c-late')).toEqual([]);
    expect(w.apiMessages('c-late')).toEqual([]);
    // The reply was replaced at planning time: the alerting metric counts it (issue 13, item 5).
    expect(
      await metricValue(
        w,
        'convo_bridge_window_blocked_replies_total{rule="after-hours",business="default"}',
      ),
    ).toBe(1);
  });

  itOffCluster()(
    'the same late message on a WhatsApp QR number (no window) is answered and delivered',
    async () => {
      world = await createWorld({ config: await exampleConfig({ hours: 'closed' }) });
      const w = world;
      w.conversation('c-qr', { type: 'whatsapp_qr', id: 'ch_wa_qr' }, 'Andi');
      w.say('c-qr', 'Halo, masih buka?', '25h');
      await waitFor(() => w.apiMessages('c-qr').length === 1, { timeoutMs: 10_000, what: 'the reply' });
      await w.settled();
      expect(w.apiMessages('c-qr')).toHaveLength(1);
      expect(w.apiMessages('c-qr')[0]).toMatchObject({
        text: 'Terima kasih Andi! Tim kami kembali pada jam kerja.',
        deliveryStatus: 'delivered',
      });
      expect(w.notes('c-qr')).toEqual([]);
    },
  );

  itOffCluster()(
    'the window from history: a bridge that never saw the customer message reads it before replying',
    async () => {
      const aiCatalog = `  - name: ai-offers-catalog
    on: ai_reply
    if: { text: { any_keywords: [ katalog ] } }
    then: [ { reply: { text: "Ini katalog kami: https://cdn.example.com/katalog.pdf" } } ]`;
      // Seeded conversations emit no webhooks: the bridge learns of the customer's messages only
      // by reading the history when it needs the window.
      world = await createWorld({
        config: await exampleConfig({ hours: 'open', extraRules: aiCatalog }),
        emulator: {
          seedData: {
            conversations: [
              {
                id: 'h-fresh',
                channel: { type: 'whatsapp_api', id: 'ch_waba_1' },
                messages: [{ from: 'customer', text: 'Halo', ago: '2h' }],
              },
              {
                id: 'h-stale',
                channel: { type: 'whatsapp_api', id: 'ch_waba_1' },
                messages: [{ from: 'customer', text: 'Halo', ago: '25h' }],
              },
            ],
          },
        },
      });
      const w = world;
      w.admin.aiReply('h-fresh', 'Silakan lihat katalog kami');
      w.admin.aiReply('h-stale', 'Silakan lihat katalog kami');
      await waitFor(() => w.apiMessages('h-fresh').length === 1, {
        timeoutMs: 10_000,
        what: 'the reply inside the window',
      });
      await waitFor(() => w.notes('h-stale').length === 1 && w.detail('h-stale').needHuman, {
        timeoutMs: 10_000,
        what: 'when_closed outside the window',
      });
      await w.settled();
      expect(w.apiMessages('h-fresh')).toHaveLength(1);
      expect(w.notes('h-stale')).toHaveLength(1);
      expect(w.apiMessages('h-fresh')[0]?.deliveryStatus).toBe('delivered');
      expect(w.notes('h-fresh')).toEqual([]);
      expect(w.notes('h-stale')[0]).toMatch(/^Reply not sent: the 24-hour window is closed \(1h( \d+m)?\)/);
      expect(w.apiMessages('h-stale')).toEqual([]);
      expect(w.requests('history', 'h-fresh').length).toBeGreaterThan(0);
      // One blocked reply (h-stale), though the plan was evaluated twice (before and after history).
      expect(
        await metricValue(
          w,
          'convo_bridge_window_blocked_replies_total{rule="ai-offers-catalog",business="default"}',
        ),
      ).toBe(1);
    },
  );
});
