import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import { exampleConfig } from '../../support/bridge-harness.js';
import { createWorld, itOffCluster, type World } from '../../support/e2e-world.js';

// The shipped example config (config/bridge.example.yaml) doing what it says, end to end:
// emulator -> webhook -> convo-bridge start (a real process) -> platform API calls back.
describe('the example config end to end', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('escalate-complaints: note with the keyword, need-human, a signed CRM forward, and nothing else', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'closed' }) });
    const w = world;
    w.conversation('c-complaint', { type: 'whatsapp_qr', id: 'ch_wa_qr' });
    w.say('c-complaint', 'Saya KECEWA, barangnya rusak. Minta refund!');

    await waitFor(() => w.crm.forConversation('c-complaint').length === 1, {
      timeoutMs: 10_000,
      what: 'the CRM forward',
    });
    const detail = w.detail('c-complaint');
    expect(detail.notes.map((n) => n.text)).toEqual([
      "Escalated by escalate-complaints: customer wrote 'kecewa'",
    ]);
    expect(detail.notes[0]?.senderName).toBe('api');
    expect(detail.needHuman).toBe(true);
    expect(detail.status).toBe('Butuh CS');
    const [forward] = w.crm.forConversation('c-complaint');
    expect(forward?.verified).toBe(true);
    expect(JSON.parse(forward?.body ?? '{}')).toMatchObject({
      rule: 'escalate-complaints',
      event: {
        kind: 'message_in',
        conversationId: 'c-complaint',
        text: 'Saya KECEWA, barangnya rusak. Minta refund!',
      },
    });
    // stop: true -> the after-hours rule (hours are closed today) does not reply to a complaint.
    expect(w.apiMessages('c-complaint')).toEqual([]);
    // and the 15-minute timer is pending in Redis (set right after the forward: wait for it).
    await waitFor(async () => (await w.timerIds('c-complaint').then((t) => t.length)) === 1, {
      timeoutMs: 10_000,
      what: 'the escalation timer to be set',
    });
  });

  itOffCluster()('catalog: replies with the catalog PDF as a document, delivered', async () => {
    world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
    const w = world;
    w.conversation('c-catalog', { type: 'telegram', id: 'ch_tg' });
    w.say('c-catalog', 'Boleh minta katalog terbaru?');

    const [reply] = await waitFor(
      () => (w.apiMessages('c-catalog').length > 0 ? w.apiMessages('c-catalog') : undefined),
      {
        timeoutMs: 10_000,
        what: 'the catalog reply',
      },
    );
    expect(reply).toMatchObject({
      type: 'document',
      text: 'https://cdn.example.com/katalog.pdf',
      caption: 'Katalog terbaru',
      deliveryStatus: 'delivered',
    });
    expect(w.notes('c-catalog')).toEqual([]);
  });

  it('after-hours: thanks the customer by name, once per conversation, only when closed', async () => {
    // Done jobs kept: the test reads what the second message's run returned.
    world = await createWorld({
      config: await exampleConfig({ hours: 'closed', retention: { done_events: '1h' } }),
    });
    const w = world;
    w.conversation('c-night', { type: 'webchat', id: 'ch_web' }, 'Siti');
    w.say('c-night', 'Halo, masih buka?');
    await waitFor(() => w.apiMessages('c-night').length === 1, {
      timeoutMs: 10_000,
      what: 'the after-hours reply',
    });
    expect(w.apiMessages('c-night')[0]?.text).toBe('Terima kasih Siti! Tim kami kembali pada jam kerja.');

    // A second message within 12 h: processed, but once_per_conversation holds the reply back.
    const second = w.say('c-night', 'Halo? Ada orang?');
    const secondKey = `channel.message_in|${second.messageId}`;
    const secondRun = await waitFor(async () => (await w.eventRun(secondKey))?.result, {
      timeoutMs: 10_000,
      what: 'the second message to be processed',
    });
    expect(secondRun).toMatchObject({ actions: [] });
    await waitFor(async () => (await w.redis.zcard(w.keys.order('c-night'))) === 0, {
      timeoutMs: 10_000,
      what: 'the second message to be finished',
    });
    expect(w.apiMessages('c-night')).toHaveLength(1);
  });

  it('after-hours: stays quiet during business hours', async () => {
    world = await createWorld({
      config: await exampleConfig({ hours: 'open', retention: { done_events: '1h' } }),
    });
    const w = world;
    w.conversation('c-day', { type: 'webchat', id: 'ch_web' });
    const message = w.say('c-day', 'Halo, masih buka?');
    const key = `channel.message_in|${message.messageId}`;
    const run = await waitFor(async () => (await w.eventRun(key))?.result, {
      timeoutMs: 10_000,
      what: 'the event to be processed',
    });
    expect(run).toMatchObject({ actions: [], matched: [] });
    expect(w.apiMessages('c-day')).toEqual([]);
  });

  itOffCluster()(
    'ai-unsure: an AI reply saying it does not know marks the conversation for a human and notes why',
    async () => {
      world = await createWorld({ config: await exampleConfig({ hours: 'open' }) });
      const w = world;
      w.conversation('c-ai', { type: 'instagram', id: 'ch_ig' });
      w.say('c-ai', 'Apakah ada warna ungu?');
      w.admin.aiReply('c-ai', 'Maaf, saya tidak tahu soal itu.');
      await waitFor(() => w.notes('c-ai').length === 1, { timeoutMs: 10_000, what: 'the ai-unsure note' });
      expect(w.notes('c-ai')).toEqual(['The AI was unsure; handed to the team.']);
      expect(w.detail('c-ai').needHuman).toBe(true);
    },
  );
});
