import { describe, expect, it } from 'vitest';
import type { CrmDelivery } from '../../../src/demo/crm-sink.js';
import { DEMO_CONVERSATIONS, type DemoConversation, TIMER_NOTE } from '../../../src/demo/demo-script.js';
import { observeConversation } from '../../../src/demo/verify-outcome.js';
import type { ApiRequestRecord, ConversationDetail, MessageView } from '../../../src/emulator/admin-views.js';

function conversation(id: string): DemoConversation {
  const found = DEMO_CONVERSATIONS.find((c) => c.id === id);
  if (!found) throw new Error(id);
  return found;
}

let seq = 0;
function message(
  conversationId: string,
  origin: MessageView['origin'],
  text: string,
  extra: Partial<MessageView> = {},
): MessageView {
  seq += 1;
  return {
    id: seq,
    messageId: `m-${seq}`,
    conversationId,
    origin,
    sender: origin === 'customer' ? 'user' : 'agent',
    senderName: origin === 'note' ? 'api' : 'x',
    type: 'text',
    text,
    caption: '',
    mimeType: 'text/plain',
    sentAt: '2026-11-23 07:40:00',
    sentAtIso: '2026-11-23T00:40:00.000Z',
    deliveryStatus: origin === 'note' ? 'sent' : 'delivered',
    replyToMessageId: null,
    isNote: origin === 'note',
    ...extra,
  };
}

function detail(id: string, messages: MessageView[], needHuman: boolean): ConversationDetail {
  const c = conversation(id);
  return {
    id,
    label: c.label,
    channel: c.channel,
    status: needHuman ? 'Butuh CS' : 'Ditangani',
    mode: needHuman ? 'human' : 'ai',
    needHuman,
    agentName: null,
    aiMarksHandled: true,
    createdAt: '2026-11-23T00:00:00.000Z',
    lastCustomerMessageAt: null,
    messageCount: messages.length,
    lastMessage: messages.at(-1) ?? null,
    messages,
    notes: messages.filter((m) => m.isNote),
  } as ConversationDetail;
}

function needHumanCall(conversationId: string, ok = true): ApiRequestRecord {
  return {
    seq: 1,
    at: '2026-11-23T00:40:00.000Z',
    method: 'POST',
    path: '/v1/conversation/need-human',
    endpoint: 'needHuman',
    authenticated: true,
    auth: 'headers',
    credential: 'current',
    callerGone: false,
    httpStatus: ok ? 200 : 503,
    rc: ok ? null : 503,
    errorMsg: ok ? null : 'injected',
    faults: ok ? [] : ['f-1'],
    body: { conversation_id: conversationId },
    durationMs: 1,
  };
}

function forward(action: string, extra: Partial<CrmDelivery> = {}): CrmDelivery {
  return {
    webhookId: `msg_${action}`,
    verified: true,
    status: 200,
    duplicate: false,
    receivedAt: '2026-11-23T00:40:00.000Z',
    conversationId: 'conv-budi',
    rule: 'escalate-complaints',
    action,
    error: null,
    ...extra,
  };
}

const ESCALATED = "Escalated by escalate-complaints: customer wrote 'kecewa'";

/** Budi's conversation as it should end: one escalation note, one need-human call, one forward, no timer note. */
function budi(
  overrides: {
    messages?: MessageView[];
    requests?: ApiRequestRecord[];
    crm?: CrmDelivery[];
    timersDue?: boolean;
  } = {},
) {
  return observeConversation({
    conversation: conversation('conv-budi'),
    detail: detail(
      'conv-budi',
      overrides.messages ?? [
        message('conv-budi', 'customer', 'Saya kecewa, paket datang rusak. Minta refund!'),
        message('conv-budi', 'note', ESCALATED),
        message('conv-budi', 'agent', 'Mohon maaf Kak Budi'),
      ],
      true,
    ),
    requests: overrides.requests ?? [needHumanCall('conv-budi', false), needHumanCall('conv-budi')],
    crm: overrides.crm ?? [
      forward('escalate-complaints#2', { status: 503 }),
      forward('escalate-complaints#2'),
    ],
    timersDue: overrides.timersDue ?? true,
  });
}

describe('observeConversation', () => {
  it('reports a conversation that went as expected, with no problems', () => {
    const report = budi();
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      label: 'Budi',
      channelLabel: 'WhatsApp QR',
      wrote: ['Saya kecewa, paket datang rusak. Minta refund!'],
      rules: ['escalate-complaints'],
      needHumanCalls: 1,
      needHuman: true,
      timer: 'cancelled',
      blocked: 0,
      crm: [{ action: 'escalate-complaints#2', accepted: 1, requests: 2 }],
    });
    expect(report.notes).toEqual([
      { kind: 'note', text: ESCALATED, deliveryStatus: 'sent', rule: 'escalate-complaints' },
    ]);
    expect(report.others).toEqual(['x: "Mohon maaf Kak Budi" (delivered)']);
  });

  const customer = () => message('conv-budi', 'customer', 'Saya kecewa');
  it.each([
    [
      'the escalation note is missing',
      { messages: [customer()] },
      `Budi (conv-budi): missing note from escalate-complaints: "${ESCALATED}"`,
    ],
    [
      'the escalation note is there twice',
      {
        messages: [
          customer(),
          message('conv-budi', 'note', ESCALATED),
          message('conv-budi', 'note', ESCALATED),
        ],
      },
      `Budi (conv-budi): note from escalate-complaints done 2 times: "${ESCALATED}"`,
    ],
    [
      'a reply nobody expected',
      {
        messages: [customer(), message('conv-budi', 'note', ESCALATED), message('conv-budi', 'api', 'Halo!')],
      },
      'Budi (conv-budi): unexpected reply "Halo!"',
    ],
    [
      'the timer fired although an agent replied',
      {
        messages: [
          customer(),
          message('conv-budi', 'note', ESCALATED),
          message('conv-budi', 'note', TIMER_NOTE),
        ],
      },
      'Budi (conv-budi): the escalation timer fired although an agent replied',
    ],
    [
      'the timer was not yet due',
      { timersDue: false },
      'Budi (conv-budi): the escalation timer was not yet due when checked',
    ],
    [
      'need-human called twice with success',
      { requests: [needHumanCall('conv-budi'), needHumanCall('conv-budi')] },
      'Budi (conv-budi): 2 successful need-human calls, expected 1',
    ],
    [
      'need-human only failed',
      { requests: [needHumanCall('conv-budi', false)] },
      'Budi (conv-budi): 0 successful need-human calls, expected 1',
    ],
    [
      'need-human called for another conversation only',
      { requests: [needHumanCall('conv-andi')] },
      'Budi (conv-budi): 0 successful need-human calls, expected 1',
    ],
    [
      'the CRM never accepted the forward',
      { crm: [forward('escalate-complaints#2', { status: 503 })] },
      'Budi (conv-budi): CRM forward escalate-complaints#2 accepted 0 times, expected once',
    ],
    [
      'a forward nobody expected',
      { crm: [forward('escalate-complaints#2'), forward('escalate-complaints#3.1')] },
      'Budi (conv-budi): unexpected CRM forward escalate-complaints#3.1',
    ],
    [
      'a forward with a bad signature',
      {
        crm: [
          forward('escalate-complaints#2'),
          forward('escalate-complaints#2', { verified: false, status: 401 }),
        ],
      },
      'Budi (conv-budi): 1 CRM forwards failed the signature check',
    ],
  ])('%s', (_name, overrides, problem) => {
    expect(budi(overrides).problems).toContain(problem);
  });

  it('a forward the CRM saw twice under one webhook-id counts once', () => {
    const report = budi({
      crm: [forward('escalate-complaints#2'), forward('escalate-complaints#2', { duplicate: true })],
    });
    expect(report.problems).toEqual([]);
    expect(report.crm).toEqual([
      { action: 'escalate-complaints#2', rule: 'escalate-complaints', accepted: 1, requests: 2 },
    ]);
  });

  it('the closed window: a blocked reply is the when_closed note, and a reply that failed to deliver is a problem', () => {
    const dewi = conversation('conv-dewi');
    const observe = (messages: MessageView[]) =>
      observeConversation({
        conversation: dewi,
        detail: detail('conv-dewi', messages, true),
        requests: [needHumanCall('conv-dewi')],
        crm: [],
        timersDue: true,
      });
    const base = [
      message('conv-dewi', 'customer', 'Halo, pesanan #1042 saya kapan dikirim?'),
      message('conv-dewi', 'api', 'Halo Dewi, kami sedang tutup. Kami balas pada jam kerja.'),
      message('conv-dewi', 'ai', 'Mau sekalian kami kirim katalog terbaru?', { deliveryStatus: 'failed' }),
    ];
    const good = observe([
      ...base,
      message('conv-dewi', 'note', 'Reply not sent: the 24-hour window is closed (1h). Use a template.'),
    ]);
    expect(good.problems).toEqual([]);
    expect(good.blocked).toBe(1);
    expect(good.rules).toEqual(['after-hours-whatsapp', 'when_closed (window)']);

    const sentAnyway = observe([
      ...base,
      message('conv-dewi', 'api', 'https://cdn.example.com/katalog.pdf', {
        type: 'document',
        deliveryStatus: 'failed',
      }),
    ]);
    expect(sentAnyway.problems).toEqual([
      'Dewi (conv-dewi): unexpected reply "katalog.pdf (document)"',
      'Dewi (conv-dewi): the reply "katalog.pdf (document)" was sent but failed to deliver',
      'Dewi (conv-dewi): missing note from when_closed (window): "Reply not sent: the 24-hour window is closed (1h)"',
      'Dewi (conv-dewi): 0 replies blocked by the closed window, expected 1',
    ]);
  });
});
