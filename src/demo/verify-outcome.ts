import type { ApiRequestRecord, ConversationDetail, MessageView } from '../emulator/admin-views.js';
import type { CrmDelivery } from './crm-sink.js';
import { type DemoConversation, type EffectMatch, type ExpectedEffect, TIMER_NOTE } from './demo-script.js';

/**
 * What the bridge did in one conversation, read from the outside (the emulator's messages, notes
 * and request log, and the CRM sink's deliveries), and how that compares with what the script
 * expects. Pure: the runner gathers the inputs, this decides. Every expected note, reply, forward
 * and need-human call must be there exactly once; anything the bridge did that the script does
 * not expect is a problem too.
 */
export interface ObservedEffect {
  kind: 'note' | 'reply';
  /** The text, or `<file name> (<type>)` for media. */
  text: string;
  /** Delivery status of a reply (`delivered`, `failed`, ...). */
  deliveryStatus: string;
  /** The expectation it was matched to, or null when nothing expected it. */
  rule: string | null;
}

export interface CrmForwardSummary {
  action: string;
  rule: string | null;
  /** Accepted first deliveries (exactly one is right). */
  accepted: number;
  /** Every request the CRM got for it: retries after its 503s, repeated ids. */
  requests: number;
}

export interface ConversationReport {
  id: string;
  label: string;
  channelLabel: string;
  /** What the customer wrote, oldest first. */
  wrote: string[];
  /** Rules whose effects were seen, in the script's order. */
  rules: string[];
  notes: ObservedEffect[];
  replies: ObservedEffect[];
  /** Need-human calls the platform answered with success. */
  needHumanCalls: number;
  /** The conversation's need-human mark in the emulator. */
  needHuman: boolean;
  crm: CrmForwardSummary[];
  /** Forwards whose signature did not verify. */
  crmUnsigned: number;
  timer: 'fired' | 'cancelled' | null;
  blocked: number;
  /** Other activity worth showing: the AI's and the agents' messages, with their delivery status. */
  others: string[];
  problems: string[];
}

export interface ObservationInput {
  conversation: DemoConversation;
  detail: ConversationDetail;
  requests: readonly ApiRequestRecord[];
  crm: readonly CrmDelivery[];
  /** True once the escalation timers are past due, so a missing timer note means "cancelled". */
  timersDue: boolean;
}

const WINDOW_NOTE = 'Reply not sent: the 24-hour window is closed';

function fileName(url: string): string {
  const last = url.split('/').at(-1);
  return last && last !== '' ? last : url;
}

function describeMessage(message: MessageView): string {
  return message.type === 'text' ? message.text : `${fileName(message.text)} (${message.type})`;
}

function matches(match: EffectMatch, message: MessageView): boolean {
  if ('mediaUrl' in match) return message.type !== 'text' && message.text === match.mediaUrl;
  return message.text.includes(match.contains);
}

function effectKind(message: MessageView): 'note' | 'reply' {
  return message.isNote || message.origin === 'note' ? 'note' : 'reply';
}

function quoted(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

function needHumanTarget(record: ApiRequestRecord): string | null {
  const body = record.body;
  if (typeof body !== 'object' || body === null) return null;
  const id = (body as Record<string, unknown>).conversation_id;
  return typeof id === 'string' ? id : null;
}

export function succeeded(record: ApiRequestRecord): boolean {
  return (
    record.httpStatus !== null &&
    record.httpStatus < 400 &&
    record.rc === null &&
    record.errorMsg === null &&
    record.faults.length === 0
  );
}

export function observeConversation(input: ObservationInput): ConversationReport {
  const { conversation, detail } = input;
  const expected = conversation.expect;
  const problems: string[] = [];
  const where = `${conversation.label} (${conversation.id})`;

  const wrote = detail.messages.filter((m) => m.origin === 'customer').map((m) => m.text);
  const others = detail.messages
    .filter((m) => m.origin === 'ai' || m.origin === 'agent')
    .map((m) => `${m.origin === 'ai' ? 'AI' : m.senderName}: ${quoted(m.text, 40)} (${m.deliveryStatus})`);

  // Attribute every message the bridge made (API replies and notes) to one expectation.
  const bridgeMessages = detail.messages.filter((m) => m.origin === 'api' || m.origin === 'note');
  const counts = new Map<ExpectedEffect, number>(expected.effects.map((effect) => [effect, 0]));
  const notes: ObservedEffect[] = [];
  const replies: ObservedEffect[] = [];
  for (const message of bridgeMessages) {
    const kind = effectKind(message);
    const effect = expected.effects.find((e) => e.kind === kind && matches(e.match, message));
    if (effect) counts.set(effect, (counts.get(effect) ?? 0) + 1);
    else problems.push(`${where}: unexpected ${kind} ${quoted(describeMessage(message))}`);
    const observed: ObservedEffect = {
      kind,
      text: describeMessage(message),
      deliveryStatus: message.deliveryStatus,
      rule: effect?.rule ?? null,
    };
    (kind === 'note' ? notes : replies).push(observed);
    if (kind === 'reply' && message.deliveryStatus === 'failed') {
      problems.push(`${where}: the reply ${quoted(observed.text)} was sent but failed to deliver`);
    }
  }
  for (const [effect, count] of counts) {
    const what = 'mediaUrl' in effect.match ? effect.match.mediaUrl : effect.match.contains;
    if (count === 0) problems.push(`${where}: missing ${effect.kind} from ${effect.rule}: ${quoted(what)}`);
    if (count > 1)
      problems.push(`${where}: ${effect.kind} from ${effect.rule} done ${count} times: ${quoted(what)}`);
  }

  const needHumanCalls = input.requests.filter(
    (r) => r.endpoint === 'needHuman' && succeeded(r) && needHumanTarget(r) === conversation.id,
  ).length;
  const wantCalls = expected.needHuman ? 1 : 0;
  if (needHumanCalls !== wantCalls) {
    problems.push(`${where}: ${needHumanCalls} successful need-human calls, expected ${wantCalls}`);
  }
  if (expected.needHuman && !detail.needHuman) problems.push(`${where}: not marked as needing a human`);

  const forwards = input.crm.filter((d) => d.conversationId === conversation.id);
  const unsigned = input.crm.filter((d) => !d.verified && d.conversationId === conversation.id).length;
  const byAction = new Map<string, CrmForwardSummary>();
  for (const delivery of forwards) {
    const action = delivery.action ?? '(no action id)';
    const summary = byAction.get(action) ?? { action, rule: delivery.rule, accepted: 0, requests: 0 };
    summary.requests += 1;
    if (delivery.verified && delivery.status === 200 && !delivery.duplicate) summary.accepted += 1;
    byAction.set(action, summary);
  }
  for (const action of expected.crm) {
    const accepted = byAction.get(action)?.accepted ?? 0;
    if (accepted !== 1)
      problems.push(`${where}: CRM forward ${action} accepted ${accepted} times, expected once`);
  }
  for (const action of byAction.keys()) {
    if (!expected.crm.includes(action)) problems.push(`${where}: unexpected CRM forward ${action}`);
  }
  if (unsigned > 0) problems.push(`${where}: ${unsigned} CRM forwards failed the signature check`);

  const timerEffect = expected.effects.find((e) => e.fromTimer === true);
  let timer: ConversationReport['timer'] = null;
  if (expected.timer === 'fired' && timerEffect && (counts.get(timerEffect) ?? 0) > 0) timer = 'fired';
  if (expected.timer === 'cancelled') {
    const fired = notes.some((n) => n.text.includes(TIMER_NOTE));
    if (fired) problems.push(`${where}: the escalation timer fired although an agent replied`);
    else if (!input.timersDue) problems.push(`${where}: the escalation timer was not yet due when checked`);
    else timer = 'cancelled';
  }

  const blocked = notes.filter((n) => n.text.startsWith(WINDOW_NOTE)).length;
  if (blocked !== expected.blocked) {
    problems.push(`${where}: ${blocked} replies blocked by the closed window, expected ${expected.blocked}`);
  }

  const seenRules = new Set<string>();
  for (const effect of expected.effects) if ((counts.get(effect) ?? 0) > 0) seenRules.add(effect.rule);
  for (const summary of byAction.values())
    if (summary.rule && summary.accepted > 0) seenRules.add(summary.rule);

  return {
    id: conversation.id,
    label: conversation.label,
    channelLabel: conversation.channelLabel,
    wrote,
    rules: [...seenRules],
    notes,
    replies,
    needHumanCalls,
    needHuman: detail.needHuman,
    crm: [...byAction.values()],
    crmUnsigned: unsigned,
    timer,
    blocked,
    others,
    problems,
  };
}
