import { describe, expect, it } from 'vitest';
import type { ConversationDetail } from '../../../src/emulator/emulator-admin.js';
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
