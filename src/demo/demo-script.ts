import type { ChannelType } from '../emulator/channels.js';
import type { FaultSpecInput } from '../emulator/faults.js';

/**
 * The scripted morning of `npm run demo`, as data: who writes on which channel and when (WIB, on
 * the simulated clock), what the AI and the team do, which platform faults and webhook
 * redeliveries happen, and what the bridge must have done in each conversation by the end. The
 * runner (run-demo.ts) plays it; the outcome is read back from the emulator and the CRM sink and
 * checked against `expect` (verify-outcome.ts).
 */
export interface DemoConversation {
  id: string;
  /** The customer's name (the conversation label). */
  label: string;
  channel: { type: ChannelType; id: string; name: string };
  /** The channel as the final table shows it. */
  channelLabel: string;
  expect: ExpectedOutcome;
}

/** How an expected note or reply is recognised among the conversation's messages. */
export type EffectMatch = { contains: string } | { mediaUrl: string };

export interface ExpectedEffect {
  /** The rule the effect comes from; `when_closed (window)` for reply_window.when_closed. */
  rule: string;
  kind: 'note' | 'reply';
  match: EffectMatch;
  /** Done by the escalation timer when it fires (so its absence means the timer was cancelled). */
  fromTimer?: true;
}

export interface ExpectedOutcome {
  /** Notes and replies the bridge must have added, each exactly once. */
  effects: ExpectedEffect[];
  /** A successful need-human call for this conversation: exactly one when true, none when false. */
  needHuman: boolean;
  /** Forwards the CRM must have received (verified, once each), by the action id they carry. */
  crm: string[];
  /** The escalation timer: fired (its note and forward happen), cancelled (they never do), none. */
  timer: 'fired' | 'cancelled' | null;
  /** Replies the closed 24-hour window must have blocked (none sent; the when_closed note is there). */
  blocked: number;
}

export type DemoStep =
  | { kind: 'customer'; at: StepTime; conversation: string; text: string }
  | { kind: 'ai'; at: StepTime; conversation: string; text: string }
  /** A team member takes the conversation over in the dashboard and replies. */
  | { kind: 'agent'; at: StepTime; conversation: string; agent: string; text: string }
  /** The platform delivers a webhook it already delivered again (the last one of that kind). */
  | { kind: 'redeliver'; conversation: string; event: 'customer' | 'ai' | 'agent' }
  /** `what` names the fault in the progress line and the totals. */
  | { kind: 'fault'; spec: FaultSpecInput; what: string }
  /** The CRM answers the next `count` forwards with 503 (the bridge retries the same webhook-id). */
  | { kind: 'crm-hiccup'; count: number };

/** `HH:MM` WIB on the demo's morning; `day: -1` is the day before. */
export interface StepTime {
  time: string;
  day?: -1;
}

export const CATALOG_URL = 'https://cdn.example.com/katalog.pdf';
/** The timer the script relies on: escalate-complaints' `after:` in config/demo.yaml. */
export const ESCALATION_RULE = 'escalate-complaints';
/** The note of that timer (config/demo.yaml). */
export const TIMER_NOTE = 'No agent reply 20 seconds after escalation.';

const escalation = (keyword: string): ExpectedEffect => ({
  rule: ESCALATION_RULE,
  kind: 'note',
  match: { contains: `Escalated by escalate-complaints: customer wrote '${keyword}'` },
});

export const DEMO_CONVERSATIONS: readonly DemoConversation[] = [
  {
    id: 'conv-dewi',
    label: 'Dewi',
    channel: { type: 'whatsapp_api', id: 'ch_waba_1', name: 'WA Bisnis Toko Maju' },
    channelLabel: 'WhatsApp API',
    expect: {
      effects: [
        { rule: 'after-hours-whatsapp', kind: 'reply', match: { contains: 'Halo Dewi, kami sedang tutup.' } },
        {
          rule: 'when_closed (window)',
          kind: 'note',
          match: { contains: 'Reply not sent: the 24-hour window is closed (1h)' },
        },
      ],
      needHuman: true,
      crm: [],
      timer: null,
      blocked: 1,
    },
  },
  {
    id: 'conv-budi',
    label: 'Budi',
    channel: { type: 'whatsapp_qr', id: 'ch_wa_qr', name: 'WA Toko Maju' },
    channelLabel: 'WhatsApp QR',
    expect: {
      effects: [escalation('kecewa')],
      needHuman: true,
      crm: ['escalate-complaints#2'],
      timer: 'cancelled',
      blocked: 0,
    },
  },
  {
    id: 'conv-sari',
    label: 'Sari',
    channel: { type: 'instagram', id: 'ch_ig_1', name: 'Instagram Toko Maju' },
    channelLabel: 'Instagram',
    expect: {
      effects: [
        { rule: 'after-hours', kind: 'reply', match: { contains: 'Terima kasih Sari! Tim kami kembali' } },
      ],
      needHuman: false,
      crm: [],
      timer: null,
      blocked: 0,
    },
  },
  {
    id: 'conv-andi',
    label: 'Andi',
    channel: { type: 'instagram', id: 'ch_ig_1', name: 'Instagram Toko Maju' },
    channelLabel: 'Instagram',
    expect: {
      effects: [
        escalation('komplain'),
        { rule: ESCALATION_RULE, kind: 'note', match: { contains: TIMER_NOTE }, fromTimer: true },
      ],
      needHuman: true,
      crm: ['escalate-complaints#2', 'escalate-complaints#3.1'],
      timer: 'fired',
      blocked: 0,
    },
  },
  {
    id: 'conv-rina',
    label: 'Rina',
    channel: { type: 'telegram', id: 'ch_tg_1', name: 'Telegram @tokomaju' },
    channelLabel: 'Telegram',
    expect: {
      effects: [{ rule: 'catalog', kind: 'reply', match: { mediaUrl: CATALOG_URL } }],
      needHuman: false,
      crm: [],
      timer: null,
      blocked: 0,
    },
  },
  {
    id: 'conv-joko',
    label: 'Joko',
    channel: { type: 'webchat', id: 'ch_web_1', name: 'Web chat tokomaju.id' },
    channelLabel: 'Web chat',
    expect: {
      effects: [{ rule: 'catalog', kind: 'reply', match: { mediaUrl: CATALOG_URL } }],
      needHuman: false,
      crm: [],
      timer: null,
      blocked: 0,
    },
  },
  {
    id: 'conv-maya',
    label: 'Maya',
    channel: { type: 'telegram', id: 'ch_tg_1', name: 'Telegram @tokomaju' },
    channelLabel: 'Telegram',
    expect: {
      effects: [
        { rule: 'ai-unsure', kind: 'note', match: { contains: 'The AI was unsure; handed to the team.' } },
      ],
      needHuman: true,
      crm: [],
      timer: null,
      blocked: 0,
    },
  },
];

/**
 * The morning. Steps run in order; after each one the runner waits until the platform has
 * delivered every webhook and the bridge has finished every event, so the story reads in order.
 */
export const DEMO_STEPS: readonly DemoStep[] = [
  // Yesterday, before opening: Dewi asks on the WhatsApp Business number and gets the after-hours answer.
  {
    kind: 'customer',
    at: { day: -1, time: '07:35' },
    conversation: 'conv-dewi',
    text: 'Halo, pesanan #1042 saya kapan dikirim?',
  },
  // This morning, before opening.
  {
    kind: 'fault',
    spec: {
      type: 'rate_limit',
      endpoint: 'note',
      retryAfterSeconds: 1,
      delivery: 'http',
      fraction: 1,
      times: 1,
    },
    what: '429 with Retry-After: 1 on a note (the client waited 1 s and retried)',
  },
  {
    kind: 'fault',
    spec: {
      type: 'error',
      endpoint: 'needHuman',
      status: 503,
      mode: 'before',
      delivery: 'http',
      fraction: 1,
      times: 1,
    },
    what: '503 on need-human before acting (retried)',
  },
  {
    kind: 'customer',
    at: { time: '07:40' },
    conversation: 'conv-budi',
    text: 'Saya kecewa, paket datang rusak. Minta refund!',
  },
  { kind: 'redeliver', conversation: 'conv-budi', event: 'customer' },
  { kind: 'crm-hiccup', count: 1 },
  {
    kind: 'fault',
    spec: {
      type: 'error',
      endpoint: 'send',
      status: 503,
      mode: 'after',
      delivery: 'http',
      fraction: 0.5,
      times: 2,
    },
    what: '503 after a send went out (found in history on retry, not sent again)',
  },
  {
    kind: 'customer',
    at: { time: '07:45' },
    conversation: 'conv-sari',
    text: 'Masih buka? Mau tanya stok sepatu ukuran 40.',
  },
  {
    kind: 'customer',
    at: { time: '07:50' },
    conversation: 'conv-andi',
    text: 'Komplain: sudah 2 minggu pesanan belum dikirim, saya tidak puas.',
  },
  { kind: 'customer', at: { time: '07:52' }, conversation: 'conv-sari', text: 'Halo? Ada yang bisa bantu?' },
  // Putri starts early and answers Budi before his escalation timer runs out: it is cancelled.
  {
    kind: 'agent',
    at: { time: '07:55' },
    conversation: 'conv-budi',
    agent: 'Putri',
    text: 'Mohon maaf Kak Budi, kami kirim pengganti hari ini.',
  },
  // Opening time.
  {
    kind: 'customer',
    at: { time: '08:05' },
    conversation: 'conv-rina',
    text: 'Boleh minta katalog terbaru?',
  },
  { kind: 'redeliver', conversation: 'conv-rina', event: 'customer' },
  { kind: 'customer', at: { time: '08:10' }, conversation: 'conv-joko', text: 'Ada catalog produk baru?' },
  { kind: 'customer', at: { time: '08:20' }, conversation: 'conv-maya', text: 'Kak, bisa COD ke Bandung?' },
  {
    kind: 'ai',
    at: { time: '08:21' },
    conversation: 'conv-maya',
    text: 'Maaf Kak, saya tidak tahu apakah COD bisa ke Bandung.',
  },
  { kind: 'redeliver', conversation: 'conv-maya', event: 'ai' },
  // 25 hours after Dewi's message the AI offers the catalogue: the window is closed.
  {
    kind: 'ai',
    at: { time: '08:35' },
    conversation: 'conv-dewi',
    text: 'Kak Dewi, pesanan sudah dikirim. Mau sekalian kami kirim katalog terbaru?',
  },
];
