import { describe, expect, it } from 'vitest';
import type { ConversationRecord, StoredMessage } from '../../../src/emulator/emulator-state.js';
import { buildWebhookPayload, webhookEventName } from '../../../src/emulator/webhook-payload.js';

const conversation: ConversationRecord = {
  id: 'c1',
  label: 'Budi',
  channel: { type: 'whatsapp_api', id: 'ch1', name: 'WA Bisnis' },
  status: 'Belum Dibaca',
  mode: 'ai',
  needHuman: false,
  createdAtMs: 0,
  lastCustomerMessageAtMs: 0,
  agentName: null,
  aiMarksHandled: true,
  messages: [],
};
const message: StoredMessage = {
  id: 3,
  messageId: 'm-3',
  conversationId: 'c1',
  origin: 'customer',
  sender: 'user',
  senderName: 'Budi',
  type: 'text',
  body: 'Halo',
  caption: '',
  mimeType: 'text/plain',
  sentAtMs: 1_767_582_000_999,
  deliveryStatus: 'delivered',
  replyToMessageId: null,
  isNote: false,
};
const context = (form: 'current' | 'earlier') => ({
  form,
  business: { id: 'biz', name: 'Toko' },
  owner: { id: 'u1', name: 'Owner' },
  ai: { id: 'ai-1', name: 'Asisten' },
});

describe('webhookEventName', () => {
  it.each([
    ['customer_message', 'current', 'channel.message_in'],
    ['ai_reply', 'current', 'ai.message_generated'],
    ['agent_reply', 'current', 'agent.message_out'],
    ['assigned', 'current', undefined],
    ['customer_message', 'earlier', 'message.incoming'],
    ['ai_reply', 'earlier', 'message.sent'],
    ['agent_reply', 'earlier', 'message.sent'],
    ['assigned', 'earlier', 'conversation.assigned'],
  ] as const)('%s in the %s form is %s', (kind, form, name) => {
    expect(webhookEventName(kind, form)).toBe(name);
  });
});

describe('buildWebhookPayload', () => {
  it('builds the envelope with seconds, engine per form and need_human as 0/1', () => {
    const current = buildWebhookPayload(
      { kind: 'customer_message', conversation, message },
      context('current'),
    );
    expect(current).toEqual({
      event: 'channel.message_in',
      timestamp: 1_767_582_000,
      conversation_id: 'c1',
      conversation_label: 'Budi',
      need_human: 0,
      message: {
        id: 'm-3',
        sender_name: 'Budi',
        channel: { id: 'ch1', name: 'WA Bisnis', engine: 'waba' },
        bisnis: { id: 'biz', name: 'Toko' },
        user: { id: 'u1', name: 'Owner' },
        content: { type: 'text', text: 'Halo' },
      },
    });
    const earlier = buildWebhookPayload(
      { kind: 'customer_message', conversation: { ...conversation, needHuman: true }, message },
      context('earlier'),
    );
    expect(earlier?.message.channel.engine).toBe('whatsapp');
    expect(earlier?.need_human).toBe(1);
  });

  it('puts media in attachments and adds ai / agent', () => {
    const media: StoredMessage = {
      ...message,
      type: 'document',
      body: 'https://f/x.pdf',
      mimeType: 'application/pdf',
    };
    expect(
      buildWebhookPayload({ kind: 'ai_reply', conversation, message: media }, context('current'))?.message,
    ).toMatchObject({
      content: { type: 'document', attachments: [{ url: 'https://f/x.pdf', mime_type: 'application/pdf' }] },
      ai: { name: 'Asisten', id: 'ai-1' },
    });
    const agent = buildWebhookPayload(
      { kind: 'agent_reply', conversation, message, agentName: 'Rina' },
      context('current'),
    );
    expect(agent?.message.agent).toEqual({ name: 'Rina' });
    expect(agent?.message).not.toHaveProperty('ai');
  });

  it('describes an assignment in the earlier form and has none in the current form', () => {
    const event = { kind: 'assigned', conversation, agentName: 'Rina', atMs: 5000 } as const;
    expect(buildWebhookPayload(event, context('current'))).toBeUndefined();
    expect(buildWebhookPayload(event, context('earlier'))).toMatchObject({
      event: 'conversation.assigned',
      timestamp: 5,
      message: {
        id: 'assign-c1-5000',
        sender_name: 'Rina',
        agent: { name: 'Rina' },
        content: { type: 'text' },
      },
    });
  });
});
