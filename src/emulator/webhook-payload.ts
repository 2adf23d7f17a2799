import { type ApiForm, channelEngine } from './channels.js';
import type { EmulatorEvent, StoredMessage } from './emulator-state.js';

/**
 * Webhook bodies (webhook-payloads.md §2: one envelope for every message event). Pure.
 * Event names per form (messaging-service-interface.md, "Events"):
 *   current: customer message -> channel.message_in, AI reply -> ai.message_generated,
 *            agent reply -> agent.message_out; a hand-over or take-over has no event on this
 *            address. The AI's hand-over goes to the separate hand-over address instead
 *            (`buildHandoverPayload`).
 *   earlier: customer message -> message.incoming, AI or agent reply -> message.sent,
 *            take-over or AI hand-over -> conversation.assigned.
 */
export type WebhookContent =
  | { type: 'text'; text: string }
  | { type: string; attachments: { url: string; mime_type: string }[]; caption?: string };

export interface WebhookPayload {
  event: string;
  /** Unix seconds of the message (or of the assignment). */
  timestamp: number;
  conversation_id: string;
  conversation_label: string;
  need_human: 0 | 1;
  message: {
    id: string;
    sender_name: string;
    channel: { id: string; name: string; engine: string };
    bisnis: { id: string; name: string };
    user: { id: string; name: string };
    content: WebhookContent;
    ai?: { name: string; id: string };
    agent?: { name: string };
  };
}

export interface WebhookContext {
  readonly form: ApiForm;
  readonly business: { readonly id: string; readonly name: string };
  /** The account owner (`message.user`). */
  readonly owner: { readonly id: string; readonly name: string };
  readonly ai: { readonly id: string; readonly name: string };
}

const EVENT_NAMES: Record<ApiForm, Record<EmulatorEvent['kind'], string | undefined>> = {
  current: {
    customer_message: 'channel.message_in',
    ai_reply: 'ai.message_generated',
    agent_reply: 'agent.message_out',
    assigned: undefined,
  },
  earlier: {
    customer_message: 'message.incoming',
    ai_reply: 'message.sent',
    agent_reply: 'message.sent',
    assigned: 'conversation.assigned',
  },
};

export function webhookEventName(kind: EmulatorEvent['kind'], form: ApiForm): string | undefined {
  return EVENT_NAMES[form][kind];
}

function contentOf(message: StoredMessage): WebhookContent {
  if (message.type === 'text') return { type: 'text', text: message.body };
  return {
    type: message.type,
    attachments: [{ url: message.body, mime_type: message.mimeType }],
    ...(message.caption === '' ? {} : { caption: message.caption }),
  };
}

/** The payload for `event`, or undefined when the form has no webhook event for it. */
export function buildWebhookPayload(
  event: EmulatorEvent,
  context: WebhookContext,
): WebhookPayload | undefined {
  const name = webhookEventName(event.kind, context.form);
  if (name === undefined) return undefined;
  const { conversation } = event;
  const base = {
    channel: {
      id: conversation.channel.id,
      name: conversation.channel.name,
      engine: channelEngine(conversation.channel.type, context.form),
    },
    bisnis: { id: context.business.id, name: context.business.name },
    user: { id: context.owner.id, name: context.owner.name },
  };
  const envelope = {
    event: name,
    conversation_id: conversation.id,
    conversation_label: conversation.label,
    need_human: conversation.needHuman ? 1 : 0,
  } as const;

  if (event.kind === 'assigned') {
    const text =
      event.agentName === null
        ? 'The AI handed the conversation over to a human'
        : `Conversation taken over by ${event.agentName}`;
    return {
      ...envelope,
      timestamp: Math.floor(event.atMs / 1000),
      message: {
        id: `assign-${conversation.id}-${event.atMs}`,
        sender_name: event.agentName ?? context.ai.name,
        ...base,
        content: { type: 'text', text },
        ...(event.agentName === null ? {} : { agent: { name: event.agentName } }),
      },
    };
  }

  const { message } = event;
  return {
    ...envelope,
    timestamp: Math.floor(message.sentAtMs / 1000),
    message: {
      id: message.messageId,
      sender_name: message.senderName,
      ...base,
      content: contentOf(message),
      ...(event.kind === 'ai_reply' ? { ai: { name: context.ai.name, id: context.ai.id } } : {}),
      ...(event.kind === 'agent_reply' ? { agent: { name: event.agentName } } : {}),
    },
  };
}

/**
 * The AI's hand-over, for the agent's separate hand-over webhook address (interface, "Events": "An
 * agent can also have a separate hand-over webhook address that is called when the AI hands a
 * conversation to a human"). Its payload is not shown; the emulator's reading: the same envelope
 * as the message events, event `conversation.handover`, `need_human` 1, `message.ai` naming the
 * AI agent that handed over and a text saying so. The bridge reads it as an `assigned` event.
 */
export const HANDOVER_EVENT = 'conversation.handover';

export function buildHandoverPayload(
  event: Extract<EmulatorEvent, { kind: 'assigned' }>,
  context: WebhookContext,
): WebhookPayload {
  const { conversation } = event;
  return {
    event: HANDOVER_EVENT,
    timestamp: Math.floor(event.atMs / 1000),
    conversation_id: conversation.id,
    conversation_label: conversation.label,
    need_human: 1,
    message: {
      id: `handover-${conversation.id}-${event.atMs}`,
      sender_name: context.ai.name,
      channel: {
        id: conversation.channel.id,
        name: conversation.channel.name,
        engine: channelEngine(conversation.channel.type, context.form),
      },
      bisnis: { id: context.business.id, name: context.business.name },
      user: { id: context.owner.id, name: context.owner.name },
      content: { type: 'text', text: 'The AI handed the conversation over to a human' },
      ai: { name: context.ai.name, id: context.ai.id },
    },
  };
}
