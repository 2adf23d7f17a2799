import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/base/wait-for.js';
import type { EmulatorHandle } from '../../../src/emulator/start-emulator.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import {
  BUSINESS_ID,
  call,
  platform,
  type Receiver,
  SECRET,
  startReceiver,
  startTestEmulator,
} from './emulator-test-kit.js';

const WEBHOOK_SECRET = 'whsec-test';

describe('webhooks (real receiver on loopback)', () => {
  let emulator: EmulatorHandle | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await emulator?.close();
    await receiver?.close();
    emulator = undefined;
    receiver = undefined;
  });

  const setup = async (
    answer?: Parameters<typeof startReceiver>[0],
    options: Parameters<typeof startTestEmulator>[0] = {},
  ) => {
    receiver = await startReceiver(answer);
    emulator = await startTestEmulator({
      webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
      ...options,
    });
    emulator.admin.createConversation({
      id: 'conv-1',
      label: 'Budi',
      channel: { type: 'whatsapp_qr', id: 'ch-wa-1', name: 'WA Toko' },
    });
    return { receiver, emulator };
  };

  const settled = (handle: EmulatorHandle, count: number) =>
    waitFor(() => handle.admin.deliveries().filter((d) => d.finishedAt !== null).length >= count, {
      timeoutMs: 5000,
      what: `${count} webhook deliveries to finish`,
    });

  it('sends channel.message_in in the documented envelope with the secret in Authorization', async () => {
    const { receiver, emulator } = await setup();
    const message = emulator.admin.customerMessage('conv-1', { text: 'Halo, mau tanya' });
    await settled(emulator, 1);
    expect(receiver.calls).toHaveLength(1);
    const [only] = receiver.calls;
    expect(only?.headers.authorization).toBe(WEBHOOK_SECRET);
    expect(only?.headers['content-type']).toBe('application/json');
    expect(only?.body).toEqual({
      event: 'channel.message_in',
      timestamp: Math.floor(Date.parse(message.sentAtIso) / 1000),
      conversation_id: 'conv-1',
      conversation_label: 'Budi',
      need_human: 0,
      message: {
        id: message.messageId,
        sender_name: 'Budi',
        channel: { id: 'ch-wa-1', name: 'WA Toko', engine: 'wa' },
        bisnis: { id: BUSINESS_ID, name: 'Toko Emulator' },
        user: { id: 'user-1', name: 'Pemilik Toko' },
        content: { type: 'text', text: 'Halo, mau tanya' },
      },
    });
  });

  it('sends media as attachments, ai.message_generated with ai, agent.message_out with agent', async () => {
    const { receiver, emulator } = await setup();
    emulator.admin.customerMessage('conv-1', {
      media: { type: 'image', url: 'https://files.example/a.jpg', caption: 'ini' },
    });
    emulator.admin.aiReply('conv-1', 'Gambar diterima');
    emulator.admin.takeOver('conv-1', 'Rina');
    emulator.admin.agentReply('conv-1', 'Saya cek dulu');
    await settled(emulator, 3);
    const events = receiver.calls.map((c) => c.body.event);
    expect(events).toEqual(['channel.message_in', 'ai.message_generated', 'agent.message_out']);
    expect(receiver.calls[0]?.body.message.content).toEqual({
      type: 'image',
      attachments: [{ url: 'https://files.example/a.jpg', mime_type: 'image/jpeg' }],
      caption: 'ini',
    });
    expect(receiver.calls[1]?.body.message.ai).toEqual({ name: 'Asisten', id: 'ai-1' });
    expect(receiver.calls[1]?.body.message.sender_name).toBe('Asisten - AI');
    expect(receiver.calls[2]?.body.message.agent).toEqual({ name: 'Rina' });
    expect(receiver.calls[2]?.body.message).not.toHaveProperty('ai');
  });

  it('uses the earlier form names: message.incoming, message.sent, conversation.assigned', async () => {
    const { receiver, emulator } = await setup(undefined, { form: 'earlier', rateLimit: false });
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    emulator.admin.aiReply('conv-1', 'Halo juga');
    emulator.admin.takeOver('conv-1', 'Rina');
    emulator.admin.agentReply('conv-1', 'Saya bantu');
    await settled(emulator, 4);
    expect(receiver.calls.map((c) => c.body.event)).toEqual([
      'message.incoming',
      'message.sent',
      'conversation.assigned',
      'message.sent',
    ]);
    expect(receiver.calls[0]?.body.message.channel.engine).toBe('whatsapp');
    expect(receiver.calls[2]?.body.message.agent).toEqual({ name: 'Rina' });
  });

  it('signs with the Secret Key when no webhook secret is given (interface, Authentication rule 3)', async () => {
    receiver = await startReceiver();
    emulator = await startTestEmulator({ webhook: { url: receiver.url } });
    emulator.admin.createConversation({ id: 'conv-1' });
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    expect(receiver.calls[0]?.headers.authorization).toBe(SECRET);
    // The admin API takes a webhook without a secret the same way.
    await call(emulator.adminUrl, 'PUT', '/webhook', { body: { url: receiver.url } });
    emulator.admin.customerMessage('conv-1', { text: 'Halo lagi' });
    await settled(emulator, 2);
    expect(receiver.calls[1]?.headers.authorization).toBe(SECRET);
  });

  describe('the hand-over address', () => {
    let handover: Receiver | undefined;
    afterEach(async () => {
      await handover?.close();
      handover = undefined;
    });

    it.each(['current', 'earlier'] as const)(
      '%s form: the AI hand-over calls its own address with conversation.handover',
      async (form) => {
        handover = await startReceiver();
        const { receiver, emulator } = await setup(undefined, {
          form,
          rateLimit: false,
          handoverWebhook: { url: handover.url },
        });
        emulator.admin.handOver('conv-1');
        await waitFor(() => handover?.calls.length === 1, { timeoutMs: 5000, what: 'the hand-over call' });
        await emulator.admin.deliveriesSettled();
        const [only] = handover.calls;
        expect(only?.headers.authorization).toBe(SECRET);
        expect(only?.body).toMatchObject({
          event: 'conversation.handover',
          conversation_id: 'conv-1',
          need_human: 1,
          message: {
            channel: { id: 'ch-wa-1', engine: form === 'current' ? 'wa' : 'whatsapp' },
            ai: { name: 'Asisten', id: 'ai-1' },
            content: { type: 'text', text: 'The AI handed the conversation over to a human' },
          },
        });
        expect(emulator.admin.handoverDeliveries().map((d) => d.state)).toEqual(['delivered']);
        // The message webhook: nothing in the current form, conversation.assigned in the earlier.
        expect(receiver.calls.map((c) => c.body.event)).toEqual(
          form === 'current' ? [] : ['conversation.assigned'],
        );
      },
    );

    it('a take-over by an agent does not call the hand-over address; none is called when unset', async () => {
      handover = await startReceiver();
      const { emulator } = await setup(undefined, { handoverWebhook: { url: handover.url, secret: 'ho' } });
      emulator.admin.takeOver('conv-1', 'Rina');
      await emulator.admin.deliveriesSettled();
      expect(handover.calls).toHaveLength(0);
      await call(emulator.adminUrl, 'DELETE', '/handover-webhook');
      emulator.admin.returnToAi('conv-1');
      emulator.admin.handOver('conv-1');
      await emulator.admin.deliveriesSettled();
      expect(handover.calls).toHaveLength(0);
      await call(emulator.adminUrl, 'PUT', '/handover-webhook', {
        body: { url: handover.url, secret: 'ho' },
      });
      emulator.admin.returnToAi('conv-1');
      emulator.admin.handOver('conv-1');
      await waitFor(() => handover?.calls.length === 1, { timeoutMs: 5000, what: 'the hand-over call' });
      expect(handover.calls[0]?.headers.authorization).toBe('ho');
    });
  });

  it('reports need_human 1 once the conversation is marked', async () => {
    const { receiver, emulator } = await setup();
    await platform(emulator).needHuman({ conversation_id: 'conv-1' });
    emulator.admin.customerMessage('conv-1', { text: 'Halo?' });
    await settled(emulator, 1);
    expect(receiver.calls[0]?.body.need_human).toBe(1);
  });

  it('makes exactly 4 attempts when the receiver answers success:false three times, then success:true', async () => {
    const { receiver, emulator } = await setup((n) => ({
      status: 200,
      body: JSON.stringify({ success: n >= 4 }),
    }));
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    expect(receiver.calls).toHaveLength(4);
    const [delivery] = emulator.admin.deliveries();
    expect(delivery?.state).toBe('delivered');
    expect(delivery?.attempts.map((a) => [a.attempt, a.outcome, a.httpStatus])).toEqual([
      [1, 'failure', 200],
      [2, 'failure', 200],
      [3, 'failure', 200],
      [4, 'success', 200],
    ]);
    const log = (await call(emulator.adminUrl, 'GET', '/delivery-log')).json.attempts;
    expect(log).toHaveLength(4);
    expect(log[0]).toMatchObject({
      event: 'channel.message_in',
      attempt: 1,
      httpStatus: 200,
      body: '{"success":false}',
    });
    expect(log[0].at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('gives up after 4 failed attempts and marks the delivery failed', async () => {
    const { receiver, emulator } = await setup(() => ({ status: 503, body: 'busy' }));
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    expect(receiver.calls).toHaveLength(4);
    const [delivery] = emulator.admin.deliveries();
    expect(delivery).toMatchObject({ state: 'failed', reason: 'no success after 4 attempts' });
    expect(delivery?.attempts.map((a) => a.httpStatus)).toEqual([503, 503, 503, 503]);
    // Nothing more arrives later.
    await emulator.admin.deliveriesSettled();
    expect(receiver.calls).toHaveLength(4);
  });

  it('counts HTTP 500 with {"success":true} as success (the status is ignored)', async () => {
    const { receiver, emulator } = await setup(() => ({ status: 500, body: '{"success":true}' }));
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    expect(receiver.calls).toHaveLength(1);
    expect(emulator.admin.deliveries()[0]?.state).toBe('delivered');
  });

  it('counts HTTP 200 without a JSON success body as a failure', async () => {
    const { receiver, emulator } = await setup((n) => ({
      status: 200,
      body: n === 1 ? 'OK' : '{"success":true}',
    }));
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    expect(receiver.calls).toHaveLength(2);
    expect(emulator.admin.deliveries()[0]?.attempts[0]?.error).toBe(
      'the answer is not a JSON body with "success": true',
    );
  });

  it('records connection failures as attempts with the error', async () => {
    // A port nothing listens on (just released).
    const port = await findFreePort();
    emulator = await startTestEmulator({
      webhook: { url: `http://127.0.0.1:${port}/unreachable`, secret: 'x' },
    });
    emulator.admin.createConversation({ id: 'conv-1' });
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    const [delivery] = emulator.admin.deliveries();
    expect(delivery?.state).toBe('failed');
    expect(delivery?.attempts).toHaveLength(4);
    expect(delivery?.attempts[0]).toMatchObject({ httpStatus: null, body: null });
    expect(delivery?.attempts[0]?.error).toContain('ECONNREFUSED');
  });

  it('emits no webhook for POST /v1/message, notes or need-human', async () => {
    const { receiver, emulator } = await setup();
    const api = platform(emulator);
    expect((await api.send({ conversation_id: 'conv-1', text: 'dari API' })).json.success).toBe(true);
    expect((await api.note({ conversation_id: 'conv-1', note: 'catatan' })).json.success).toBe(true);
    expect((await api.needHuman({ conversation_id: 'conv-1' })).json.success).toBe(true);
    // A marker event afterwards: once it has arrived, anything sent before it would have too.
    emulator.admin.agentReply('conv-1', 'penanda');
    await settled(emulator, 1);
    expect(receiver.calls.map((c) => c.body.event)).toEqual(['agent.message_out']);
  });

  it('delivers one conversation in order even when earlier deliveries need retries', async () => {
    const { receiver, emulator } = await setup((n) => ({
      status: 200,
      body: JSON.stringify({ success: n !== 1 }),
    }));
    for (const text of ['satu', 'dua', 'tiga']) emulator.admin.customerMessage('conv-1', { text });
    await settled(emulator, 3);
    const texts = receiver.calls.map((c) => c.body.message.content.text);
    expect(texts).toEqual(['satu', 'satu', 'dua', 'tiga']);
  });

  it('does not block the API while a receiver is slow', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver = await startReceiver();
    const slowUrl = receiver.url;
    emulator = await startTestEmulator({ webhook: { url: slowUrl, secret: 'x' }, webhookTimeoutMs: 5000 });
    // Point the webhook at a server that never answers until released.
    const { createServer } = await import('node:http');
    const hanging = createServer((_req, res) => {
      void gate.then(() => res.end('{"success":true}'));
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const address = hanging.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await call(emulator.adminUrl, 'PUT', '/webhook', {
      body: { url: `http://127.0.0.1:${port}/hook`, secret: 'x' },
    });
    emulator.admin.createConversation({ id: 'conv-1' });
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    const started = Date.now();
    const history = await platform(emulator).history('conv-1');
    expect(history.json.data.list).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(emulator.admin.deliveries()[0]?.state).toBe('delivering');
    release?.();
    await settled(emulator, 1);
    expect(emulator.admin.deliveries()[0]?.state).toBe('delivered');
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
  });

  it('re-sends a delivery on demand with the same payload (a redelivery)', async () => {
    const { receiver, emulator } = await setup();
    emulator.admin.customerMessage('conv-1', { text: 'Halo' });
    await settled(emulator, 1);
    const [first] = emulator.admin.deliveries();
    const again = await call(emulator.adminUrl, 'POST', `/deliveries/${first?.id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.json.redeliveryOf).toBe(first?.id);
    await settled(emulator, 2);
    expect(receiver.calls).toHaveLength(2);
    expect(receiver.calls[1]?.body).toEqual(receiver.calls[0]?.body);
    const missing = await call(emulator.adminUrl, 'POST', '/deliveries/dlv-999/redeliver');
    expect(missing.status).toBe(404);
  });

  it('records a skipped delivery when no webhook URL is set, and can be pointed at one at run time', async () => {
    emulator = await startTestEmulator();
    emulator.admin.createConversation({ id: 'conv-1' });
    emulator.admin.customerMessage('conv-1', { text: 'tanpa webhook' });
    expect(emulator.admin.deliveries()[0]).toMatchObject({
      state: 'skipped',
      reason: 'no webhook URL is configured',
    });
    receiver = await startReceiver();
    const set = await call(emulator.adminUrl, 'PUT', '/webhook', {
      body: { url: receiver.url, secret: 'later' },
    });
    expect(set.json.webhook).toEqual({ url: receiver.url, secretSet: true });
    emulator.admin.customerMessage('conv-1', { text: 'dengan webhook' });
    await settled(emulator, 2);
    expect(receiver.calls).toHaveLength(1);
    expect(receiver.calls[0]?.headers.authorization).toBe('later');
  });
});
