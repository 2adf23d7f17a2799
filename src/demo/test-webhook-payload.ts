import { randomUUID } from 'node:crypto';

/**
 * Realistic webhook bodies for `convo-bridge send-test-webhook` (pure): the §2 envelope of
 * webhook-payloads.md in the current form (`channel.message_in`, `ai.message_generated`, engine
 * `wa`) or the earlier one (`message.incoming`, `message.sent`, engine `whatsapp`), and the
 * dashboard's test ping. The texts are the ones config/demo.yaml's rules react to.
 */
export const TEST_EVENTS = ['complaint', 'catalog', 'after-hours', 'ai-unsure', 'test'] as const;
export type TestEvent = (typeof TEST_EVENTS)[number];
export type WebhookForm = 'current' | 'earlier';

export interface TestWebhookOptions {
  conversationId: string;
  form: WebhookForm;
  /** Epoch ms of the event. */
  nowMs: number;
  /** The message id (random when omitted): a second send with the same id is a redelivery. */
  messageId?: string;
}

interface Sample {
  inbound: boolean;
  text: string;
  customer: string;
  channel: { id: string; name: string; engine: Record<WebhookForm, string> };
}

const WHATSAPP = { id: 'ch_wa_1', name: 'WA Toko Maju', engine: { current: 'wa', earlier: 'whatsapp' } };
const SAMPLES: Record<Exclude<TestEvent, 'test'>, Sample> = {
  complaint: {
    inbound: true,
    text: 'Saya kecewa, paket datang rusak. Minta refund!',
    customer: 'Budi',
    channel: WHATSAPP,
  },
  catalog: {
    inbound: true,
    text: 'Halo, boleh minta katalog terbaru?',
    customer: 'Rina',
    channel: {
      id: 'ch_tg_1',
      name: 'Telegram @tokomaju',
      engine: { current: 'telegram', earlier: 'telegram' },
    },
  },
  'after-hours': {
    inbound: true,
    text: 'Masih buka? Mau tanya stok.',
    customer: 'Sari',
    channel: {
      id: 'ch_ig_1',
      name: 'Instagram Toko Maju',
      engine: { current: 'instagram', earlier: 'instagram' },
    },
  },
  'ai-unsure': {
    inbound: false,
    text: 'Maaf Kak, saya tidak tahu apakah COD bisa ke Bandung.',
    customer: 'Maya',
    channel: WHATSAPP,
  },
};

const EVENT_NAMES: Record<WebhookForm, { inbound: string; ai: string }> = {
  current: { inbound: 'channel.message_in', ai: 'ai.message_generated' },
  earlier: { inbound: 'message.incoming', ai: 'message.sent' },
};

export function buildTestWebhook(event: TestEvent, options: TestWebhookOptions): Record<string, unknown> {
  const timestamp = Math.floor(options.nowMs / 1000);
  if (event === 'test') return { event: 'test', timestamp };
  const sample = SAMPLES[event];
  const ai = { name: 'Asisten', id: 'ai-1' };
  return {
    event: sample.inbound ? EVENT_NAMES[options.form].inbound : EVENT_NAMES[options.form].ai,
    timestamp,
    conversation_id: options.conversationId,
    conversation_label: sample.customer,
    need_human: 0,
    message: {
      id: options.messageId ?? `test-${randomUUID()}`,
      sender_name: sample.inbound ? sample.customer : `${ai.name} - AI`,
      channel: {
        id: sample.channel.id,
        name: sample.channel.name,
        engine: sample.channel.engine[options.form],
      },
      bisnis: { id: 'toko-maju', name: 'Toko Maju' },
      user: { id: 'user-1', name: 'Pemilik Toko' },
      content: { type: 'text', text: sample.text },
      ...(sample.inbound ? {} : { ai }),
    },
  };
}
