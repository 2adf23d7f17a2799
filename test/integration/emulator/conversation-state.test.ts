import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { call, platform, startTestEmulator } from './emulator-test-kit.js';

describe('conversation state (real HTTP, admin API)', () => {
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  const post = (path: string, body: unknown = {}) =>
    call((emulator as EmulatorHandle).adminUrl, 'POST', path, { body });
  const get = (path: string) => call((emulator as EmulatorHandle).adminUrl, 'GET', path);

  it('creates a conversation on every channel with id, label and channel id/name', async () => {
    emulator = await startTestEmulator();
    const channels = [
      'whatsapp_qr',
      'whatsapp_api',
      'telegram',
      'instagram',
      'facebook',
      'intercom',
      'slack',
      'socialchat',
      'webchat',
    ];
    for (const type of channels) {
      const created = await post('/conversations', {
        id: `c-${type}`,
        label: `Label ${type}`,
        channel: { type, id: `ch-${type}`, name: `Name ${type}` },
      });
      expect(created.status).toBe(200);
      expect(created.json).toMatchObject({
        id: `c-${type}`,
        label: `Label ${type}`,
        channel: { type, id: `ch-${type}`, name: `Name ${type}` },
        mode: 'ai',
        needHuman: false,
      });
    }
    const list = await get('/conversations');
    expect(list.json.conversations).toHaveLength(channels.length);
    const duplicate = await post('/conversations', { id: 'c-telegram' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.error.message).toContain('already exists');
    const badChannel = await post('/conversations', { channel: { type: 'myspace' } });
    expect(badChannel.status).toBe(400);
    expect(badChannel.json.error.code).toBe('EMULATOR_BAD_REQUEST');
  });

  it('walks the statuses: customer message, read, AI reply, need-human, return to AI, take over, done, block, skip', async () => {
    emulator = await startTestEmulator();
    await post('/conversations', { id: 'c1', label: 'Budi' });
    const status = async () => (await get('/conversations/c1')).json;

    await post('/conversations/c1/customer-message', { text: 'Halo' });
    expect(await status()).toMatchObject({ status: 'Belum Dibaca', mode: 'ai' });
    await post('/conversations/c1/read');
    expect((await status()).status).toBe('Belum Ditangani');
    await post('/conversations/c1/ai-reply', { text: 'Halo Kak, ada yang bisa dibantu?' });
    expect((await status()).status).toBe('Ditangani');

    const marked = await platform(emulator).needHuman({ conversation_id: 'c1' });
    expect(marked.json.success).toBe(true);
    expect(await status()).toMatchObject({ status: 'Butuh CS', mode: 'human', needHuman: true });
    // A new customer message keeps it waiting for a human.
    await post('/conversations/c1/customer-message', { text: 'Halo?' });
    expect((await status()).status).toBe('Butuh CS');

    await post('/conversations/c1/return-to-ai');
    expect(await status()).toMatchObject({ status: 'Belum Ditangani', mode: 'ai', needHuman: false });

    await post('/conversations/c1/take-over', { agentName: 'Rina' });
    expect(await status()).toMatchObject({ mode: 'human', agentName: 'Rina', status: 'Belum Ditangani' });
    await post('/conversations/c1/agent-reply', { text: 'Saya bantu ya' });
    expect((await status()).status).toBe('Ditangani');

    await post('/conversations/c1/done');
    expect(await status()).toMatchObject({
      status: 'Selesai',
      mode: 'ai',
      needHuman: false,
      agentName: null,
    });
    await post('/conversations/c1/customer-message', { text: 'Satu lagi' });
    expect((await status()).status).toBe('Belum Dibaca');

    await post('/conversations/c1/block');
    expect((await status()).status).toBe('Diblokir');
    await post('/conversations/c1/skip');
    expect((await status()).status).toBe('Dilewati');
  });

  it('leaves an AI reply in Belum Ditangani when the AI agent does not mark as handled', async () => {
    emulator = await startTestEmulator({ aiMarksHandled: false });
    await post('/conversations', { id: 'c1' });
    await post('/conversations/c1/customer-message', { text: 'Halo' });
    await post('/conversations/c1/ai-reply', { text: 'Halo juga' });
    expect((await get('/conversations/c1')).json.status).toBe('Belum Ditangani');
  });

  it.each([
    ['the conversation needs a human', 'need-human'],
    ['the user is blocked', 'block'],
    ['the conversation is skipped', 'skip'],
    ['a human took it over', 'take-over'],
  ])('keeps the AI quiet when %s', async (_case, action) => {
    emulator = await startTestEmulator();
    await post('/conversations', { id: 'c1' });
    await post('/conversations/c1/customer-message', { text: 'Halo' });
    if (action === 'need-human') await platform(emulator).needHuman({ conversation_id: 'c1' });
    else await post(`/conversations/c1/${action}`);
    const reply = await post('/conversations/c1/ai-reply', { text: 'Saya AI' });
    expect(reply.status).toBe(409);
    expect(reply.json.error.message).toContain('the AI stays quiet');
    expect((await get('/conversations/c1')).json.messages).toHaveLength(1);
  });

  it('signs AI replies "<AI name> - <label>" and agent replies with the agent name', async () => {
    emulator = await startTestEmulator({ ai: { id: 'ai-9', name: 'Sarah', label: 'CS Toko' } });
    await post('/conversations', { id: 'c1' });
    await post('/conversations/c1/customer-message', { text: 'Halo' });
    const ai = await post('/conversations/c1/ai-reply', { text: 'Halo!' });
    expect(ai.json).toMatchObject({ senderName: 'Sarah - CS Toko', origin: 'ai', sender: 'agent' });
    const agent = await post('/conversations/c1/agent-reply', { text: 'Hai', agentName: 'Dewi' });
    expect(agent.json).toMatchObject({ senderName: 'Dewi', origin: 'agent' });
  });

  it('counts conversations per status and filters by status', async () => {
    emulator = await startTestEmulator();
    await post('/conversations', { id: 'a' });
    await post('/conversations', { id: 'b' });
    await post('/conversations', { id: 'c' });
    await post('/conversations/a/customer-message', { text: '1' });
    await post('/conversations/b/done');
    await platform(emulator).needHuman({ conversation_id: 'c' });
    const list = await get('/conversations');
    expect(list.json.counts).toEqual({
      'Belum Dibaca': 1,
      'Butuh CS': 1,
      'Belum Ditangani': 0,
      Ditangani: 0,
      Selesai: 1,
      Diblokir: 0,
      Dilewati: 0,
    });
    expect(list.json.needHumanTotal).toBe(1);
    const filtered = await get(`/conversations?status=${encodeURIComponent('Butuh CS')}`);
    expect(filtered.json.conversations.map((c: { id: string }) => c.id)).toEqual(['c']);
    const bad = await get('/conversations?status=Open');
    expect(bad.status).toBe(400);
  });

  it.each([
    ['customer-message', { text: 'x' }],
    ['ai-reply', { text: 'x' }],
    ['agent-reply', { text: 'x' }],
    ['take-over', {}],
    ['done', {}],
  ])('answers 404 for %s on an unknown conversation', async (action, body) => {
    emulator = await startTestEmulator();
    const result = await post(`/conversations/ghost/${action}`, body);
    expect(result.status).toBe(404);
    expect(result.json.error).toEqual({
      code: 'EMULATOR_NOT_FOUND',
      message: 'conversation "ghost" does not exist: create it with POST /_emulator/conversations',
    });
  });

  describe('delivery_status', () => {
    it('is delivered at once in immediate mode (the default)', async () => {
      emulator = await startTestEmulator();
      emulator.admin.createConversation({ id: 'c1' });
      emulator.admin.customerMessage('c1', { text: 'Halo' });
      await platform(emulator).send({ conversation_id: 'c1', text: 'Balasan' });
      expect((await platform(emulator).history('c1')).json.data.list[1].delivery_status).toBe('delivered');
    });

    it('moves pending -> sent -> delivered -> read one step per advance in manual mode', async () => {
      emulator = await startTestEmulator({ delivery: 'manual', finalDeliveryStatus: 'read' });
      emulator.admin.createConversation({ id: 'c1' });
      emulator.admin.customerMessage('c1', { text: 'Halo' });
      await platform(emulator).send({ conversation_id: 'c1', text: 'Balasan' });
      const seen: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        seen.push((await platform(emulator).history('c1')).json.data.list[1].delivery_status);
        await post('/delivery/advance');
      }
      expect(seen).toEqual(['pending', 'sent', 'delivered', 'read', 'read']);
    });

    it('advances on its own on a tick', async () => {
      emulator = await startTestEmulator({ delivery: { stepMs: 20 } });
      emulator.admin.createConversation({ id: 'c1' });
      emulator.admin.customerMessage('c1', { text: 'Halo' });
      await platform(emulator).send({ conversation_id: 'c1', text: 'Balasan' });
      const statuses = new Set<string>();
      await waitFor(
        async () => {
          const status = (await platform(emulator as EmulatorHandle).history('c1')).json.data.list[1]
            .delivery_status;
          statuses.add(status);
          return status === 'delivered';
        },
        { timeoutMs: 3000, intervalMs: 5, what: 'the message to be delivered' },
      );
      expect(statuses.has('delivered')).toBe(true);
      expect([...statuses].every((s) => ['pending', 'sent', 'delivered'].includes(s))).toBe(true);
    });

    it('can be set by hand, e.g. to read', async () => {
      emulator = await startTestEmulator();
      emulator.admin.createConversation({ id: 'c1' });
      const message = emulator.admin.agentReply('c1', 'Hai');
      const set = await post(`/messages/${message.id}/delivery-status`, { status: 'read' });
      expect(set.json.deliveryStatus).toBe('read');
      const missing = await post('/messages/99999/delivery-status', { status: 'read' });
      expect(missing.status).toBe(404);
    });
  });
});
