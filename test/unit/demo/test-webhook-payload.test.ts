import { describe, expect, it } from 'vitest';
import { buildTestWebhook, TEST_EVENTS } from '../../../src/demo/test-webhook-payload.js';
import { normalizeEvent } from '../../../src/receive/normalize/normalize-event.js';

const NOW = Date.parse('2026-11-23T01:15:00Z');

describe('buildTestWebhook', () => {
  it.each([
    ['complaint', 'current', 'channel.message_in', 'message_in', 'whatsapp', 'Budi'],
    ['catalog', 'current', 'channel.message_in', 'message_in', 'telegram', 'Rina'],
    ['after-hours', 'current', 'channel.message_in', 'message_in', 'instagram', 'Sari'],
    ['ai-unsure', 'current', 'ai.message_generated', 'ai_reply', 'whatsapp', 'Asisten - AI'],
    ['complaint', 'earlier', 'message.incoming', 'message_in', 'whatsapp', 'Budi'],
    ['ai-unsure', 'earlier', 'message.sent', 'message_sent', 'whatsapp', 'Asisten - AI'],
  ] as const)(
    '%s in the %s form is read by the receiver as %s',
    (event, form, name, kind, engine, sender) => {
      const body = buildTestWebhook(event, { conversationId: 'conv-9', form, nowMs: NOW, messageId: 'm-1' });
      const result = normalizeEvent(body, { receivedAt: new Date(NOW + 1000) });
      if (!result.ok) throw new Error(result.problem.message);
      expect(result.event).toMatchObject({
        name,
        kind,
        key: `${name}|m-1`,
        conversationId: 'conv-9',
        messageId: 'm-1',
        senderName: sender,
        needHuman: false,
        occurredAt: '2026-11-23T01:15:00.000Z',
        business: { id: 'toko-maju', name: 'Toko Maju' },
      });
      expect(result.event.channel.engine).toBe(engine);
      expect(result.event.text.length).toBeGreaterThan(10);
    },
  );

  it('the engine is wa in the current form and whatsapp in the earlier one (webhook-payloads.md §2)', () => {
    const engine = (form: 'current' | 'earlier') =>
      (
        buildTestWebhook('complaint', { conversationId: 'c', form, nowMs: NOW }).message as {
          channel: { engine: string };
        }
      ).channel.engine;
    expect([engine('current'), engine('earlier')]).toEqual(['wa', 'whatsapp']);
  });

  it('the test ping is the dashboard one', () => {
    expect(buildTestWebhook('test', { conversationId: 'c', form: 'current', nowMs: NOW })).toEqual({
      event: 'test',
      timestamp: NOW / 1000,
    });
  });

  it('gives each message a new id unless one is given', () => {
    const id = () =>
      (
        buildTestWebhook('catalog', { conversationId: 'c', form: 'current', nowMs: NOW }).message as {
          id: string;
        }
      ).id;
    expect(id()).not.toBe(id());
    expect(TEST_EVENTS).toEqual(['complaint', 'catalog', 'after-hours', 'ai-unsure', 'test']);
  });
});
