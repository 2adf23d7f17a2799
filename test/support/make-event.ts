import type { ConversationEvent } from '../../src/events/conversation-event.js';

/** A canonical event with sensible defaults; override what a test cares about. */
export function makeEvent(overrides: Partial<ConversationEvent> = {}): ConversationEvent {
  const messageId = overrides.messageId ?? `msg-${Math.random().toString(36).slice(2, 10)}`;
  const name = overrides.name ?? 'channel.message_in';
  const now = new Date().toISOString();
  return {
    v: 1,
    kind: 'message_in',
    name,
    key: `${name}|${messageId}`,
    conversationId: 'conv-1',
    messageId,
    text: 'halo',
    caption: '',
    contentType: 'text',
    attachments: [],
    channel: { id: 'ch_wa_1', name: 'WhatsApp', engine: 'whatsapp' },
    business: { id: 'biz-1', name: 'Toko Maju' },
    senderName: 'Budi',
    conversationLabel: 'Budi',
    aiName: null,
    agentName: null,
    needHuman: false,
    occurredAt: now,
    receivedAt: now,
    ...overrides,
  };
}
