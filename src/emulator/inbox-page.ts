import type { ConversationDetail, ConversationView, MessageView } from './admin-views.js';
import { type ApiForm, hasReplyWindow, REPLY_WINDOW_MS } from './channels.js';
import { CONVERSATION_STATUSES, type ConversationStatus } from './conversation-status.js';
import { escapeHtml } from './escape-html.js';
import type { InboxClocks } from './inbox-clocks.js';

/**
 * The emulator's inbox page: a server-rendered stand-in for the platform's dashboard. Pure: a model
 * in, an HTML string out. Every piece of user text goes through escapeHtml; the only links are the
 * page's own (media URLs are shown as text, never loaded), so the page needs nothing from outside.
 */
export interface InboxPageModel {
  readonly businessName: string;
  readonly form: ApiForm;
  readonly counts: Readonly<Record<ConversationStatus, number>>;
  readonly total: number;
  /** The selected tab; null for "Semua" (all). */
  readonly status: ConversationStatus | null;
  readonly conversations: readonly ConversationView[];
  readonly selected: ConversationDetail | null;
  /** A one-line message to show (an admin error), if any. */
  readonly notice?: string | undefined;
  /** The bridge's clocks of the selected conversation, when the emulator has a source for them. */
  readonly clocks?: InboxClocks | null | undefined;
  /** Now on the emulator's clock (ms), for the platform's own reply window. */
  readonly nowMs?: number | undefined;
  /**
   * The businesses the emulator hosts, the first (the default) first; with more than one, the page
   * shows a selector.
   */
  readonly businesses: readonly { readonly id: string; readonly name: string }[];
  /**
   * The id of the business shown. Every link and form of the page of a business other than the
   * first names it, so the page stays on it; the first's name none, as a one-business page's never did.
   */
  readonly business: string;
}

export const INBOX_PATH = '/_emulator/inbox';
const ADMIN = '/_emulator';

/** `?business=` of a page's links: its business's id, or nothing for the first (the default). */
function businessParams(model: Pick<InboxPageModel, 'businesses'>, id: string): Record<string, string> {
  return model.businesses[0]?.id === id ? {} : { business: id };
}

function inboxHref(
  business: Record<string, string>,
  status: ConversationStatus | null,
  conversationId?: string,
): string {
  const params = new URLSearchParams(business);
  if (status !== null) params.set('status', status);
  if (conversationId !== undefined) params.set('c', conversationId);
  const query = params.toString();
  return query === '' ? INBOX_PATH : `${INBOX_PATH}?${query}`;
}

/** A link to the page itself, staying on its business. */
function pageHref(model: InboxPageModel, status: ConversationStatus | null, conversationId?: string): string {
  return inboxHref(businessParams(model, model.business), status, conversationId);
}

function slug(status: string): string {
  return status.toLowerCase().replace(/\s+/g, '-');
}

const ORIGIN_LABEL: Record<MessageView['origin'], string> = {
  customer: 'Pelanggan',
  ai: 'AI',
  agent: 'Agen',
  api: 'API',
  note: 'Catatan internal',
};

/**
 * An admin endpoint of the page's business (`?business=` when it is not the first). Its parts are
 * URI-encoded, which leaves nothing an HTML attribute in double quotes would need escaped.
 */
function adminPath(model: InboxPageModel, path: string): string {
  const query = new URLSearchParams(businessParams(model, model.business)).toString();
  return query === '' ? `${ADMIN}${path}` : `${ADMIN}${path}?${query}`;
}

function actionForm(
  model: InboxPageModel,
  conversationId: string,
  action: string,
  label: string,
  back: string,
  testId: string,
  enabled = true,
): string {
  return (
    `<form method="post" action="${adminPath(model, `/conversations/${encodeURIComponent(conversationId)}/${action}`)}" class="inline">` +
    `<input type="hidden" name="_redirect" value="${escapeHtml(back)}">` +
    `<button type="submit" data-testid="${testId}"${enabled ? '' : ' disabled'}>${escapeHtml(label)}</button></form>`
  );
}

function renderMessage(message: MessageView): string {
  const body =
    message.type === 'text'
      ? `<div class="body">${escapeHtml(message.text)}</div>`
      : `<div class="body media">[${escapeHtml(message.type)}] <code>${escapeHtml(message.text)}</code>${
          message.caption === '' ? '' : `<div class="caption">${escapeHtml(message.caption)}</div>`
        }</div>`;
  const classes = ['message', `from-${message.origin}`, message.isNote ? 'note' : '']
    .filter(Boolean)
    .join(' ');
  const delivery = message.isNote
    ? '<span class="delivery note-tag">catatan</span>'
    : `<span class="delivery status-${escapeHtml(message.deliveryStatus)}" data-testid="delivery-status">${escapeHtml(message.deliveryStatus)}</span>`;
  return (
    `<li class="${classes}" data-testid="${message.isNote ? 'note' : 'message'}" data-message-id="${message.id}">` +
    `<div class="meta"><strong class="sender">${escapeHtml(message.senderName)}</strong>` +
    ` <span class="role">${escapeHtml(ORIGIN_LABEL[message.origin])}</span>` +
    ` <time>${escapeHtml(message.sentAt)} WIB</time> ${delivery}</div>${body}</li>`
  );
}

function renderConversation(model: InboxPageModel, c: ConversationDetail): string {
  const back = pageHref(model, model.status, c.id);
  const badges = [
    `<span class="badge" data-testid="conversation-status">${escapeHtml(c.status)}</span>`,
    `<span class="badge mode" data-testid="conversation-mode">${c.mode === 'ai' ? 'AI mode' : 'Human-handled'}</span>`,
    c.needHuman ? '<span class="badge warn" data-testid="need-human">Butuh CS</span>' : '',
    c.agentName === null ? '' : `<span class="badge">Agen: ${escapeHtml(c.agentName)}</span>`,
  ].join(' ');
  const actions = [
    actionForm(
      model,
      c.id,
      'take-over',
      'Take over',
      back,
      'take-over',
      c.mode === 'ai' || c.agentName === null,
    ),
    actionForm(
      model,
      c.id,
      'return-to-ai',
      'Return to AI',
      back,
      'return-to-ai',
      c.mode === 'human' || c.needHuman,
    ),
    actionForm(model, c.id, 'done', 'Done', back, 'done', c.status !== 'Selesai'),
    actionForm(model, c.id, 'read', 'Mark read', back, 'mark-read', c.status === 'Belum Dibaca'),
  ].join('');
  const clocks = renderClocks(model, c);
  const messages =
    c.messages.length === 0
      ? '<p class="empty">No messages yet.</p>'
      : `<ol class="messages">${c.messages.map(renderMessage).join('')}</ol>`;
  const id = encodeURIComponent(c.id);
  return (
    `<section class="conversation" data-testid="conversation-detail">` +
    `<header><h2>${escapeHtml(c.label)}</h2><div class="sub">${escapeHtml(c.channel.name)} (${escapeHtml(c.channel.type)}) · <code>${escapeHtml(c.id)}</code></div>` +
    `<div class="badges">${badges}</div><div class="actions">${actions}</div></header>` +
    clocks +
    messages +
    `<form method="post" action="${adminPath(model, `/conversations/${id}/agent-reply`)}" class="reply" data-testid="agent-reply-form">` +
    `<input type="hidden" name="_redirect" value="${escapeHtml(back)}">` +
    `<label>Agent reply <textarea name="text" rows="3" required data-testid="agent-reply-text"></textarea></label>` +
    `<label>Agent name <input name="agentName" placeholder="(default)"></label>` +
    `<button type="submit" data-testid="agent-reply-send">Send reply</button></form>` +
    `<form method="post" action="${adminPath(model, `/conversations/${id}/customer-message`)}" class="reply customer">` +
    `<input type="hidden" name="_redirect" value="${escapeHtml(back)}">` +
    `<label>Simulate a customer message <input name="text" required></label>` +
    `<button type="submit">Send as customer</button></form>` +
    `</section>`
  );
}

/**
 * The conversation's clocks: the platform's own reply window (24 h after the customer's last
 * message, on the channel types that have one) and, when the emulator has a source, the bridge's
 * pending timers and its idea of the window's end.
 */
function renderClocks(model: InboxPageModel, c: ConversationDetail): string {
  const lines: string[] = [];
  if (hasReplyWindow(c.channel.type)) {
    const last = c.lastCustomerMessageAt === null ? null : Date.parse(c.lastCustomerMessageAt);
    if (last === null) {
      lines.push('<li data-testid="platform-window">Reply window: closed (no customer message)</li>');
    } else {
      const closes = new Date(last + REPLY_WINDOW_MS).toISOString();
      const open = model.nowMs === undefined || model.nowMs < last + REPLY_WINDOW_MS;
      lines.push(
        `<li data-testid="platform-window">Reply window: ${open ? 'closes' : 'closed'} ${escapeHtml(closes)}</li>`,
      );
    }
  }
  if (model.clocks) {
    const w = model.clocks.window;
    if (w.applies) {
      lines.push(
        `<li data-testid="bridge-window">Bridge: window closes ${escapeHtml(w.closesLocal ?? w.closesAt ?? 'unknown')}</li>`,
      );
    }
    for (const t of model.clocks.timers) {
      lines.push(
        `<li data-testid="bridge-timer">${t.trigger === 'burst' ? 'Burst' : 'Timer'} <strong>${escapeHtml(t.rule)}</strong> (${escapeHtml(t.trigger)}) due ${escapeHtml(t.dueLocal ?? t.dueAt)}: ${escapeHtml(t.state)}</li>`,
      );
    }
    if (model.clocks.timers.length === 0)
      lines.push('<li data-testid="bridge-timer-none">Bridge: no pending timers</li>');
  }
  return lines.length === 0 ? '' : `<ul class="clocks" data-testid="clocks">${lines.join('')}</ul>`;
}

function renderList(model: InboxPageModel): string {
  if (model.conversations.length === 0)
    return '<p class="empty" data-testid="no-conversations">No conversations here.</p>';
  const items = model.conversations.map((c) => {
    const selected = model.selected?.id === c.id ? ' selected' : '';
    const preview = c.lastMessage
      ? c.lastMessage.type === 'text'
        ? c.lastMessage.text
        : `[${c.lastMessage.type}]`
      : '';
    return (
      `<li class="item${selected}" data-testid="conversation-item" data-conversation-id="${escapeHtml(c.id)}">` +
      `<a href="${escapeHtml(pageHref(model, model.status, c.id))}"><strong>${escapeHtml(c.label)}</strong>` +
      ` <span class="muted">${escapeHtml(c.channel.name)}</span>` +
      `<span class="badge small">${escapeHtml(c.status)}</span>${c.mode === 'human' ? '<span class="badge small mode">human</span>' : ''}` +
      `<div class="preview">${escapeHtml(preview.slice(0, 80))}</div></a></li>`
    );
  });
  return `<ul class="list">${items.join('')}</ul>`;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f3f4f6;color:#111827}
header.top{background:#0f766e;color:#fff;padding:10px 16px;display:flex;gap:16px;align-items:baseline}
header.top h1{font-size:18px;margin:0}.muted{color:#6b7280;font-size:12px}header.top .muted{color:#ccfbf1}
nav.tabs{display:flex;flex-wrap:wrap;gap:4px;padding:8px 16px;background:#fff;border-bottom:1px solid #e5e7eb}
nav.tabs a{padding:6px 10px;border-radius:6px;text-decoration:none;color:#374151;font-size:14px}
nav.tabs a.active{background:#0f766e;color:#fff}nav.businesses{background:#f0fdfa}.count{font-weight:600;margin-left:4px}
main{display:grid;grid-template-columns:300px 1fr;gap:12px;padding:12px 16px}
.list{list-style:none;margin:0;padding:0;background:#fff;border:1px solid #e5e7eb;border-radius:8px}
.item a{display:block;padding:8px 10px;border-bottom:1px solid #f3f4f6;color:inherit;text-decoration:none}
.item.selected a{background:#ecfeff}.preview{color:#6b7280;font-size:12px;margin-top:2px}
.badge{display:inline-block;background:#e5e7eb;border-radius:10px;padding:1px 8px;font-size:12px;margin-left:4px}
.badge.warn{background:#fee2e2;color:#991b1b}.badge.mode{background:#dbeafe}.badge.small{font-size:11px}
.conversation{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:12px}
.conversation h2{margin:0 0 2px;font-size:18px}.sub{color:#6b7280;font-size:13px}
.actions{margin:8px 0}.inline{display:inline}button{margin-right:6px;padding:5px 10px;border:1px solid #0f766e;background:#fff;color:#0f766e;border-radius:6px;cursor:pointer}
button:disabled{border-color:#d1d5db;color:#9ca3af;cursor:default}
.messages{list-style:none;padding:0;margin:8px 0}
.message{border:1px solid #e5e7eb;border-radius:8px;padding:6px 10px;margin:6px 0;max-width:75%}
.from-customer{background:#fff}.from-ai,.from-agent,.from-api{background:#ecfdf5;margin-left:auto}
.message.note{background:#fef9c3;border:1px dashed #ca8a04;max-width:100%}
.meta{font-size:12px;color:#4b5563}.role{color:#6b7280}.body{margin-top:3px;white-space:pre-wrap}
.delivery{font-size:11px;border-radius:8px;padding:0 6px;background:#e5e7eb}.status-failed{background:#fecaca;color:#991b1b}
.status-delivered,.status-read{background:#bbf7d0}.note-tag{background:#fde68a}
.reply{display:flex;flex-direction:column;gap:4px;margin-top:10px;border-top:1px solid #e5e7eb;padding-top:8px}
.reply textarea,.reply input{width:100%;box-sizing:border-box;font:inherit}.reply button{align-self:flex-start}
.clocks{list-style:none;margin:6px 0;padding:6px 10px;background:#f0f9ff;border:1px solid #bae6fd;border-radius:8px;font-size:13px}
.notice{background:#fee2e2;color:#991b1b;padding:8px 16px}.empty{color:#6b7280}
`;

/**
 * One link per business (shown only when the emulator hosts several, so a one-business page is as
 * it always was); the first business's link names none, as its page does.
 */
function renderBusinessSelector(model: InboxPageModel): string {
  const businesses = model.businesses;
  if (businesses.length < 2) return '';
  const links = businesses.map((b) => {
    const href = inboxHref(businessParams(model, b.id), null);
    const active = b.id === model.business;
    return (
      `<a href="${escapeHtml(href)}" class="${active ? 'active' : ''}" data-testid="business-option" data-business-id="${escapeHtml(b.id)}"${active ? ' aria-current="page"' : ''}>` +
      `${escapeHtml(b.name)} <code>${escapeHtml(b.id)}</code></a>`
    );
  });
  return `<nav class="tabs businesses" data-testid="business-selector" aria-label="Business">${links.join('')}</nav>`;
}

export function renderInboxPage(model: InboxPageModel): string {
  const tabs = [
    `<a href="${escapeHtml(pageHref(model, null))}" class="${model.status === null ? 'active' : ''}" data-testid="tab-semua">Semua<span class="count">${model.total}</span></a>`,
    ...CONVERSATION_STATUSES.map(
      (status) =>
        `<a href="${escapeHtml(pageHref(model, status))}" class="${model.status === status ? 'active' : ''}" data-testid="tab-${slug(status)}">` +
        `${escapeHtml(status)}<span class="count" data-testid="count-${slug(status)}">${model.counts[status]}</span></a>`,
    ),
  ].join('');
  const detail = model.selected
    ? renderConversation(model, model.selected)
    : '<section class="conversation"><p class="empty">Pick a conversation.</p></section>';
  return (
    '<!doctype html><html lang="id"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>Inbox · ${escapeHtml(model.businessName)} · convo-bridge emulator</title><style>${STYLE}</style></head><body>` +
    `<header class="top"><h1>${escapeHtml(model.businessName)}</h1><span class="muted">convo-bridge platform emulator · ${escapeHtml(model.form)} form</span>` +
    `<a href="${escapeHtml(pageHref(model, model.status, model.selected?.id))}" style="color:#fff;margin-left:auto">Refresh</a></header>` +
    renderBusinessSelector(model) +
    (model.notice ? `<div class="notice" data-testid="notice">${escapeHtml(model.notice)}</div>` : '') +
    `<nav class="tabs" data-testid="status-tabs">${tabs}</nav>` +
    `<main><div>${renderList(model)}</div><div>${detail}</div></main></body></html>`
  );
}
