import { formatWib } from '../base/wib-time.js';
import type { ChannelType } from './channels.js';
import type { ConversationMode, ConversationStatus } from './conversation-status.js';
import type { ConversationRecord, DeliveryStatus, MessageOrigin, StoredMessage } from './emulator-state.js';
import type { EndpointName } from './platform-routes.js';

// What the admin API (/_emulator/) answers about conversations, messages and the platform API's
// request log, and how the stored records become those answers. The inbox page renders the same
// views; EmulatorAdmin returns them. Plain data, so this file imports neither of them.

/** One platform API request as the emulator saw it (admin: GET /_emulator/requests). */
export interface ApiRequestRecord {
  readonly seq: number;
  /** ISO-8601 time it arrived. */
  readonly at: string;
  readonly method: string;
  /** Path and query as sent. */
  readonly path: string;
  /** The operation, or null for an unknown route. */
  readonly endpoint: EndpointName | null;
  readonly authenticated: boolean;
  /** The auth scheme used, or why authentication failed (never a secret). */
  readonly auth: string;
  /**
   * Which credentials were presented: `current` (in force), `rotated` (those an auth storm
   * replaced: a client that still holds the old secret), `invalid`; null when not checked.
   */
  readonly credential: 'current' | 'rotated' | 'invalid' | null;
  /** HTTP status answered; null when the connection was dropped. */
  readonly httpStatus: number | null;
  /** `rc` of an error body; null on success. */
  readonly rc: number | null;
  readonly errorMsg: string | null;
  /**
   * The caller had closed its connection by the time the answer was ready (e.g. its process was
   * killed while the platform acted): the operation was done, the caller never heard so.
   */
  readonly callerGone: boolean;
  /** Ids of the injected faults that fired on it. */
  readonly faults: readonly string[];
  /** The parsed JSON body of a POST (null otherwise). */
  readonly body: unknown;
  readonly durationMs: number;
}

export interface MessageView {
  readonly id: number;
  readonly messageId: string;
  readonly conversationId: string;
  readonly origin: MessageOrigin;
  readonly sender: string;
  readonly senderName: string;
  readonly type: string;
  /** The text, or the file URL of a media message. */
  readonly text: string;
  readonly caption: string;
  readonly mimeType: string;
  /** WIB, `YYYY-MM-DD HH:MM:SS`. */
  readonly sentAt: string;
  readonly sentAtIso: string;
  readonly deliveryStatus: DeliveryStatus;
  readonly replyToMessageId: string | null;
  readonly isNote: boolean;
}

export interface ConversationView {
  readonly id: string;
  readonly label: string;
  readonly channel: { readonly type: ChannelType; readonly id: string; readonly name: string };
  readonly status: ConversationStatus;
  readonly mode: ConversationMode;
  readonly needHuman: boolean;
  readonly agentName: string | null;
  readonly aiMarksHandled: boolean;
  readonly createdAt: string;
  readonly lastCustomerMessageAt: string | null;
  readonly messageCount: number;
  readonly lastMessage: MessageView | null;
}

export interface ConversationDetail extends ConversationView {
  readonly messages: readonly MessageView[];
  readonly notes: readonly MessageView[];
}

export function toMessageView(message: StoredMessage): MessageView {
  return {
    id: message.id,
    messageId: message.messageId,
    conversationId: message.conversationId,
    origin: message.origin,
    sender: message.sender,
    senderName: message.senderName,
    type: message.type,
    text: message.body,
    caption: message.caption,
    mimeType: message.mimeType,
    sentAt: formatWib(new Date(message.sentAtMs)),
    sentAtIso: new Date(message.sentAtMs).toISOString(),
    deliveryStatus: message.deliveryStatus,
    replyToMessageId: message.replyToMessageId,
    isNote: message.isNote,
  };
}

export function toConversationView(conversation: ConversationRecord): ConversationView {
  const last = conversation.messages.at(-1);
  return {
    id: conversation.id,
    label: conversation.label,
    channel: conversation.channel,
    status: conversation.status,
    mode: conversation.mode,
    needHuman: conversation.needHuman,
    agentName: conversation.agentName,
    aiMarksHandled: conversation.aiMarksHandled,
    createdAt: new Date(conversation.createdAtMs).toISOString(),
    lastCustomerMessageAt:
      conversation.lastCustomerMessageAtMs === null
        ? null
        : new Date(conversation.lastCustomerMessageAtMs).toISOString(),
    messageCount: conversation.messages.length,
    lastMessage: last ? toMessageView(last) : null,
  };
}
