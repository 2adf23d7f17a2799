import { describe, expect, it } from 'vitest';
import type { ConversationDetail } from '../../../src/emulator/admin-views.js';
import { escapeHtml } from '../../../src/emulator/escape-html.js';
import { renderInboxPage } from '../../../src/emulator/inbox-page.js';

const evil = '<img src=x onerror="alert(1)">&\'';
const counts = {
  'Belum Dibaca': 1,
  'Butuh CS': 0,
  'Belum Ditangani': 0,
  Ditangani: 0,
  Selesai: 0,
  Diblokir: 0,
  Dilewati: 0,
};
const detail: ConversationDetail = {
  id: `id-${evil}`,
  label: `label-${evil}`,
  channel: { type: 'webchat', id: 'ch', name: `channel-${evil}` },
  status: 'Belum Dibaca',
  mode: 'ai',
  needHuman: false,
  agentName: null,
  aiMarksHandled: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  lastCustomerMessageAt: null,
  messageCount: 1,
  lastMessage: null,
  messages: [
    {
      id: 1,
      messageId: 'm1',
      conversationId: 'c',
      origin: 'customer',
      sender: 'user',
      senderName: `sender-${evil}`,
      type: 'image',
      text: `javascript:${evil}`,
      caption: `caption-${evil}`,
      mimeType: 'image/png',
      sentAt: '2026-01-01 07:00:00',
      sentAtIso: '2026-01-01T00:00:00.000Z',
      deliveryStatus: 'delivered',
      replyToMessageId: null,
      isNote: false,
    },
  ],
  notes: [],
};

describe('escapeHtml', () => {
  it('escapes the five HTML-special characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('renderInboxPage', () => {
  const html = renderInboxPage({
    businessName: `biz-${evil}`,
    businesses: [{ id: 'biz-1', name: `biz-${evil}` }],
    business: 'biz-1',
    form: 'current',
    counts,
    total: 1,
    status: null,
    conversations: [detail],
    selected: detail,
    notice: `notice-${evil}`,
  });

  it('escapes every piece of user text', () => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain('onerror="');
    expect(html).toContain('label-&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;');
    for (const field of ['biz', 'sender', 'caption', 'channel', 'notice', 'javascript:']) {
      expect(html).toContain(`${field}${field.endsWith(':') ? '' : '-'}&lt;img`);
    }
  });

  it('never turns a media URL into a link or an image', () => {
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('<code>javascript:&lt;img');
  });

  it('loads nothing from outside', () => {
    expect(html).not.toMatch(/<(script|link|img|iframe)\b/);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('links the conversation by its encoded id', () => {
    expect(html).toContain(`/_emulator/conversations/${encodeURIComponent(detail.id)}/take-over`);
  });
});

describe('renderInboxPage: conversation clocks (issue 16)', () => {
  const base = {
    businessName: 'Toko',
    businesses: [{ id: 'toko', name: 'Toko' }],
    business: 'toko',
    form: 'current' as const,
    counts,
    total: 1,
    status: null,
    conversations: [],
  };
  const windowed: ConversationDetail = {
    ...detail,
    channel: { type: 'whatsapp_api', id: 'ch_waba_1', name: 'WA API' },
    lastCustomerMessageAt: '2026-11-27T09:50:00.000Z',
  };

  it("shows the platform's window and the bridge's timers, escaped", () => {
    const html = renderInboxPage({
      ...base,
      selected: windowed,
      nowMs: Date.parse('2026-11-27T10:00:00Z'),
      clocks: {
        window: {
          applies: true,
          closesAt: '2026-11-28T09:50:00.000Z',
          closesLocal: 'Sat 2026-11-28 16:50 Asia/Jakarta',
        },
        timers: [
          {
            rule: `warn-${evil}`,
            trigger: 'window_closing',
            dueAt: '2026-11-28T07:50:00.000Z',
            dueLocal: 'Sat 2026-11-28 14:50 Asia/Jakarta',
            state: 'pending (cancelled by message_in,agent_reply)',
          },
        ],
      },
    });
    expect(html).toContain(
      '<li data-testid="platform-window">Reply window: closes 2026-11-28T09:50:00.000Z</li>',
    );
    expect(html).toContain('Bridge: window closes Sat 2026-11-28 16:50 Asia/Jakarta');
    expect(html).toContain(
      `Timer <strong>warn-${escapeHtml(evil)}</strong> (window_closing) due Sat 2026-11-28 14:50 Asia/Jakarta: pending (cancelled by message_in,agent_reply)`,
    );
    expect(html).not.toContain(evil);
  });

  it('says the window is closed once past it, and shows no clocks box on a channel without one and no source', () => {
    const late = renderInboxPage({ ...base, selected: windowed, nowMs: Date.parse('2026-11-29T00:00:00Z') });
    expect(late).toContain('Reply window: closed 2026-11-28T09:50:00.000Z');
    expect(late).not.toContain('bridge-timer');
    expect(renderInboxPage({ ...base, selected: detail })).not.toContain('data-testid="clocks"');
  });
});

describe('renderInboxPage: several businesses (issue 26, item 5)', () => {
  const base = {
    businessName: 'Toko B',
    form: 'current' as const,
    counts,
    total: 1,
    status: null,
    conversations: [detail],
    selected: detail,
  };
  const businesses = [
    { id: 'toko-a', name: 'Toko A' },
    { id: 'toko-b', name: `Toko ${evil}` },
  ];

  it('shows no selector with one business, and names no business in its links', () => {
    const html = renderInboxPage({
      ...base,
      businesses: [businesses[0] as { id: string; name: string }],
      business: 'toko-a',
    });
    expect(html).not.toContain('business-selector');
    expect(html).not.toContain('business=');
  });

  it('shows a selector with several; the page of another business keeps it in every link and form', () => {
    const html = renderInboxPage({ ...base, businesses, business: 'toko-b' });
    expect(html).toContain('data-testid="business-selector"');
    // The first business's page names none; the shown one is marked.
    expect(html).toContain(
      '<a href="/_emulator/inbox" class="" data-testid="business-option" data-business-id="toko-a">',
    );
    expect(html).toMatch(/href="\/_emulator\/inbox\?business=toko-b" class="active"[^>]*aria-current="page"/);
    expect(html).toContain('Toko &lt;img');
    const actions = [...html.matchAll(/action="([^"]*)"/g)].map((m) => m[1]);
    expect(actions.length).toBeGreaterThan(4);
    for (const action of actions) expect(action).toMatch(/\?business=toko-b$/);
    const redirects = [...html.matchAll(/name="_redirect" value="([^"]*)"/g)].map((m) => m[1]);
    for (const back of redirects) expect(back).toContain('business=toko-b');
    expect(html).toContain('data-testid="tab-butuh-cs"');
    expect(html).toMatch(/href="\/_emulator\/inbox\?business=toko-b&amp;status=Butuh\+CS"/);
  });
});
