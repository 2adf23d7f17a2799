import { randomUUID } from 'node:crypto';
import { type ChannelType, channelLabel, isOutsideReplyWindow } from './channels.js';
import {
  aiQuietReason,
  applyStatusTrigger,
  CONVERSATION_STATUSES,
  type ConversationFlags,
  type ConversationMode,
  type ConversationStatus,
  type StatusTrigger,
} from './conversation-status.js';
import { EmulatorError } from './emulator-error.js';
import { imageMimeType, type LinkPolicy, splitLinks } from './split-links.js';

/**
 * The emulated platform's data: conversations, their messages and notes, and the dashboard's view
 * of them. Pure in-memory state with an injected clock; side effects (webhooks, delivery progress)
 * leave through `StateHooks`. Every operation is O(1) or O(log n) in the size of the state, so the
 * emulator keeps up with benchmark traffic.
 */
export const DELIVERY_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** Who produced a message: the customer, the AI, a dashboard agent, `POST /v1/message`, or a note. */
export type MessageOrigin = 'customer' | 'ai' | 'agent' | 'api' | 'note';
export type MessageSender = 'user' | 'agent' | 'system';

export interface StoredMessage {
  /** Ascending integer id, shared by all conversations (an auto-increment, so not contiguous per conversation). */
  readonly id: number;
  readonly messageId: string;
  readonly conversationId: string;
  readonly origin: MessageOrigin;
  readonly sender: MessageSender;
  readonly senderName: string;
  /** `text`, `image`, `video`, `audio` or `document`. */
  readonly type: string;
  /** The text, or the file URL of a media message. */
  readonly body: string;
  readonly caption: string;
  readonly mimeType: string;
  readonly sentAtMs: number;
  deliveryStatus: DeliveryStatus;
  readonly replyToMessageId: string | null;
  readonly isNote: boolean;
}

export interface ChannelRef {
  readonly type: ChannelType;
  readonly id: string;
  readonly name: string;
}

export interface ConversationRecord extends ConversationFlags {
  readonly id: string;
  readonly label: string;
  readonly channel: ChannelRef;
  readonly createdAtMs: number;
  readonly lastCustomerMessageAtMs: number | null;
  /** The agent who took the conversation over, while it is human-handled. */
  readonly agentName: string | null;
  /** The AI agent's 'mark as handled' setting for this conversation. */
  readonly aiMarksHandled: boolean;
  /** Messages and notes, `id` ascending. */
  readonly messages: readonly StoredMessage[];
}

interface MutableConversation {
  id: string;
  label: string;
  channel: ChannelRef;
  status: ConversationStatus;
  mode: ConversationMode;
  needHuman: boolean;
  createdAtMs: number;
  lastCustomerMessageAtMs: number | null;
  agentName: string | null;
  aiMarksHandled: boolean;
  messages: StoredMessage[];
}

export type MessageContent =
  | { readonly kind: 'text'; readonly text: string }
  | {
      readonly kind: 'media';
      readonly type: MediaType;
      readonly url: string;
      readonly mimeType: string;
      readonly caption: string;
    };

export interface NewConversation {
  id?: string | undefined;
  label?: string | undefined;
  channel?:
    | { type?: ChannelType | undefined; id?: string | undefined; name?: string | undefined }
    | undefined;
  status?: ConversationStatus | undefined;
  mode?: ConversationMode | undefined;
  needHuman?: boolean | undefined;
  aiMarksHandled?: boolean | undefined;
}

/** What happened, for webhooks. Emitted synchronously, so the hook sees the state right after the change. */
export type EmulatorEvent =
  | {
      readonly kind: 'customer_message';
      readonly conversation: ConversationRecord;
      readonly message: StoredMessage;
    }
  | { readonly kind: 'ai_reply'; readonly conversation: ConversationRecord; readonly message: StoredMessage }
  | {
      readonly kind: 'agent_reply';
      readonly conversation: ConversationRecord;
      readonly message: StoredMessage;
      readonly agentName: string;
    }
  | {
      readonly kind: 'assigned';
      readonly conversation: ConversationRecord;
      /** The agent who took over, or null for the AI's hand-over. */
      readonly agentName: string | null;
      readonly atMs: number;
    };

export interface StateHooks {
  onEvent(event: EmulatorEvent): void;
  /** A message to the customer was created with status `pending`; `outsideWindow` means it will fail. */
  onOutbound(message: StoredMessage, outsideWindow: boolean): void;
}

export interface EmulatorStateOptions {
  readonly business: { readonly id: string; readonly name: string };
  readonly ai: { readonly id: string; readonly name: string; readonly label: string };
  readonly defaultAgentName: string;
  /** Default 'mark as handled' setting of the AI agent. */
  readonly aiMarksHandled: boolean;
  /** API sends are reported like agent replies (a platform that echoes them). */
  readonly echoApiSends?: boolean;
  readonly links: LinkPolicy | undefined;
  readonly now: () => number;
  readonly hooks: StateHooks;
}

export class EmulatorState {
  private readonly conversations = new Map<string, MutableConversation>();
  private readonly messagesById = new Map<number, StoredMessage>();
  private readonly statusCounts = new Map<ConversationStatus, number>();
  private needHumanCount = 0;
  private lastMessageId = 0;
  private lastConversationNumber = 0;

  constructor(private readonly options: EmulatorStateOptions) {
    this.reset();
  }

  reset(): void {
    this.conversations.clear();
    this.messagesById.clear();
    for (const status of CONVERSATION_STATUSES) this.statusCounts.set(status, 0);
    this.needHumanCount = 0;
    this.lastMessageId = 0;
    this.lastConversationNumber = 0;
  }

  // ---- reading ----

  getConversation(id: string): ConversationRecord | undefined {
    return this.conversations.get(id);
  }

  requireConversation(id: string): ConversationRecord {
    return this.mutable(id);
  }

  listConversations(): ConversationRecord[] {
    return [...this.conversations.values()];
  }

  countByStatus(): Record<ConversationStatus, number> {
    const counts = {} as Record<ConversationStatus, number>;
    for (const status of CONVERSATION_STATUSES) counts[status] = this.statusCounts.get(status) ?? 0;
    return counts;
  }

  needHumanTotal(): number {
    return this.needHumanCount;
  }

  getMessage(id: number): StoredMessage | undefined {
    return this.messagesById.get(id);
  }

  /**
   * Messages of a conversation with `id > lastId`, oldest first, at most `limit` (0 = all). Binary
   * search over the id-ascending list, so polling with `last_id` stays cheap on long conversations.
   * An unknown conversation has no messages.
   */
  messagesAfter(conversationId: string, lastId: number, limit: number): StoredMessage[] {
    const messages = this.conversations.get(conversationId)?.messages;
    if (!messages) return [];
    let low = 0;
    let high = messages.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((messages[mid]?.id ?? 0) <= lastId) low = mid + 1;
      else high = mid;
    }
    return messages.slice(low, limit > 0 ? low + limit : messages.length);
  }

  // ---- conversations ----

  createConversation(input: NewConversation): ConversationRecord {
    const id = input.id ?? this.nextConversationId();
    if (this.conversations.has(id)) {
      throw new EmulatorError(
        'EMULATOR_CONFLICT',
        `conversation ${JSON.stringify(id)} already exists: pick another id`,
      );
    }
    const type = input.channel?.type ?? 'whatsapp_qr';
    const needHuman = input.needHuman ?? input.status === 'Butuh CS';
    const record: MutableConversation = {
      id,
      label: input.label ?? id,
      channel: {
        type,
        id: input.channel?.id ?? `ch_${type}`,
        name: input.channel?.name ?? channelLabel(type),
      },
      status: input.status ?? (needHuman ? 'Butuh CS' : 'Belum Ditangani'),
      // The need-human mark pauses the AI, so it implies human-handled.
      mode: needHuman ? 'human' : (input.mode ?? 'ai'),
      needHuman,
      createdAtMs: this.options.now(),
      lastCustomerMessageAtMs: null,
      agentName: null,
      aiMarksHandled: input.aiMarksHandled ?? this.options.aiMarksHandled,
      messages: [],
    };
    this.conversations.set(id, record);
    this.bump(record.status, 1);
    if (record.needHuman) this.needHumanCount += 1;
    return record;
  }

  // ---- messages ----

  addCustomerMessage(
    conversationId: string,
    input: { content: MessageContent; atMs?: number | undefined; senderName?: string | undefined },
  ): StoredMessage {
    const conversation = this.mutable(conversationId);
    const atMs = input.atMs ?? this.options.now();
    const message = this.append(conversation, {
      origin: 'customer',
      sender: 'user',
      senderName: input.senderName ?? conversation.label,
      content: input.content,
      sentAtMs: atMs,
      deliveryStatus: 'delivered',
      replyToMessageId: null,
    });
    conversation.lastCustomerMessageAtMs = Math.max(conversation.lastCustomerMessageAtMs ?? atMs, atMs);
    this.transition(conversation, { kind: 'customer_message' });
    this.options.hooks.onEvent({ kind: 'customer_message', conversation, message });
    return message;
  }

  addAiReply(conversationId: string, text: string): StoredMessage {
    const conversation = this.mutable(conversationId);
    const quiet = aiQuietReason(conversation);
    if (quiet !== undefined) {
      throw new EmulatorError(
        'EMULATOR_CONFLICT',
        `the AI stays quiet in conversation ${JSON.stringify(conversationId)}: ${quiet} (return it to the AI or mark it done first)`,
      );
    }
    const { ai } = this.options;
    const message = this.appendOutbound(conversation, 'ai', `${ai.name} - ${ai.label}`, {
      kind: 'text',
      text,
    });
    this.transition(conversation, { kind: 'ai_reply', markHandled: conversation.aiMarksHandled });
    this.options.hooks.onEvent({ kind: 'ai_reply', conversation, message });
    return message;
  }

  addAgentReply(conversationId: string, text: string, agentName?: string): StoredMessage {
    const conversation = this.mutable(conversationId);
    const name = agentName ?? conversation.agentName ?? this.options.defaultAgentName;
    const message = this.appendOutbound(conversation, 'agent', name, { kind: 'text', text });
    this.transition(conversation, { kind: 'reply' });
    this.options.hooks.onEvent({ kind: 'agent_reply', conversation, message, agentName: name });
    return message;
  }

  /**
   * `POST /v1/message`: shown as an agent reply under the business name, with the link rules applied
   * to text. Emits no webhook (spec: no `agent.message_out` for API sends), unless `echoApiSends`
   * stands for a platform that does.
   */
  sendFromApi(
    conversationId: string,
    content: MessageContent,
    replyToMessageId: string | null,
  ): StoredMessage[] {
    const conversation = this.mutable(conversationId);
    const name = this.options.business.name;
    const sent: StoredMessage[] = [];
    if (content.kind === 'media') {
      sent.push(this.appendOutbound(conversation, 'api', name, content, replyToMessageId));
    } else {
      const split = splitLinks(content.text, this.options.links);
      if (split.text !== null) {
        sent.push(
          this.appendOutbound(
            conversation,
            'api',
            name,
            { kind: 'text', text: split.text },
            replyToMessageId,
          ),
        );
      }
      for (const url of split.images) {
        sent.push(
          this.appendOutbound(conversation, 'api', name, {
            kind: 'media',
            type: 'image',
            url,
            mimeType: imageMimeType(url),
            caption: '',
          }),
        );
      }
    }
    if (sent.length > 0) this.transition(conversation, { kind: 'reply' });
    if (this.options.echoApiSends) {
      for (const message of sent) {
        this.options.hooks.onEvent({ kind: 'agent_reply', conversation, message, agentName: name });
      }
    }
    return sent;
  }

  addNote(conversationId: string, text: string): StoredMessage {
    const conversation = this.mutable(conversationId);
    return this.append(conversation, {
      origin: 'note',
      sender: 'agent',
      senderName: 'api',
      content: { kind: 'text', text },
      sentAtMs: this.options.now(),
      // Notes are never sent to the customer; `sent` is the emulator's choice of a settled value.
      deliveryStatus: 'sent',
      replyToMessageId: null,
    });
  }

  /**
   * Adds a message exactly as given, without webhooks, delivery progress or status changes: seed
   * files use it to lay down history. A customer message still moves the reply window.
   */
  importMessage(
    conversationId: string,
    input: {
      origin: MessageOrigin;
      content: MessageContent;
      atMs: number;
      senderName?: string | undefined;
      deliveryStatus?: DeliveryStatus | undefined;
    },
  ): StoredMessage {
    const conversation = this.mutable(conversationId);
    const { origin } = input;
    const defaultName =
      origin === 'customer'
        ? conversation.label
        : origin === 'ai'
          ? `${this.options.ai.name} - ${this.options.ai.label}`
          : origin === 'agent'
            ? this.options.defaultAgentName
            : origin === 'api'
              ? this.options.business.name
              : 'api';
    const message = this.append(conversation, {
      origin,
      sender: origin === 'customer' ? 'user' : 'agent',
      senderName: input.senderName ?? defaultName,
      content: input.content,
      sentAtMs: input.atMs,
      deliveryStatus: input.deliveryStatus ?? (origin === 'note' ? 'sent' : 'delivered'),
      replyToMessageId: null,
    });
    if (origin === 'customer') {
      conversation.lastCustomerMessageAtMs = Math.max(
        conversation.lastCustomerMessageAtMs ?? input.atMs,
        input.atMs,
      );
    }
    return message;
  }

  /** Sets status, mode and the need-human mark directly (seed files). */
  setFlags(conversationId: string, flags: ConversationFlags): ConversationRecord {
    const conversation = this.mutable(conversationId);
    this.apply(conversation, flags);
    return conversation;
  }

  setDeliveryStatus(messageId: number, status: DeliveryStatus): StoredMessage {
    const message = this.messagesById.get(messageId);
    if (!message) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `message ${messageId} does not exist: use an id from the history`,
      );
    }
    message.deliveryStatus = status;
    return message;
  }

  // ---- conversation-level actions ----

  /** `POST /v1/conversation/need-human`: idempotent; emits nothing (the caller asked for it). */
  markNeedHuman(conversationId: string): ConversationRecord {
    const conversation = this.mutable(conversationId);
    this.transition(conversation, { kind: 'need_human' });
    return conversation;
  }

  /** The AI's hand-over rule fired (only in AI mode). */
  handOver(conversationId: string): ConversationRecord {
    const conversation = this.mutable(conversationId);
    const quiet = aiQuietReason(conversation);
    if (quiet !== undefined) {
      throw new EmulatorError(
        'EMULATOR_CONFLICT',
        `the AI cannot hand conversation ${JSON.stringify(conversationId)} over: ${quiet}`,
      );
    }
    this.transition(conversation, { kind: 'need_human' });
    this.options.hooks.onEvent({ kind: 'assigned', conversation, agentName: null, atMs: this.options.now() });
    return conversation;
  }

  /** Dashboard 'take over': AI mode -> human-handled. A conversation already human-handled is left as is. */
  takeOver(conversationId: string, agentName?: string): ConversationRecord {
    const conversation = this.mutable(conversationId);
    if (conversation.mode === 'human' && conversation.agentName !== null) return conversation;
    conversation.agentName = agentName ?? this.options.defaultAgentName;
    this.transition(conversation, { kind: 'take_over' });
    this.options.hooks.onEvent({
      kind: 'assigned',
      conversation,
      agentName: conversation.agentName,
      atMs: this.options.now(),
    });
    return conversation;
  }

  returnToAi(conversationId: string): ConversationRecord {
    const conversation = this.mutable(conversationId);
    const lastReal = findLast(conversation.messages, (m) => !m.isNote);
    this.transition(conversation, { kind: 'return_to_ai', customerWaiting: lastReal?.origin === 'customer' });
    conversation.agentName = null;
    return conversation;
  }

  done(conversationId: string): ConversationRecord {
    const conversation = this.mutable(conversationId);
    this.transition(conversation, { kind: 'done' });
    conversation.agentName = null;
    return conversation;
  }

  block(conversationId: string): ConversationRecord {
    return this.simple(conversationId, { kind: 'block' });
  }

  skip(conversationId: string): ConversationRecord {
    return this.simple(conversationId, { kind: 'skip' });
  }

  markRead(conversationId: string): ConversationRecord {
    return this.simple(conversationId, { kind: 'read' });
  }

  // ---- internals ----

  private simple(conversationId: string, trigger: StatusTrigger): ConversationRecord {
    const conversation = this.mutable(conversationId);
    this.transition(conversation, trigger);
    return conversation;
  }

  private mutable(id: string): MutableConversation {
    const conversation = this.conversations.get(id);
    if (!conversation) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `conversation ${JSON.stringify(id)} does not exist: create it with POST /_emulator/conversations`,
      );
    }
    return conversation;
  }

  private nextConversationId(): string {
    let id: string;
    do {
      this.lastConversationNumber += 1;
      id = `conv-${this.lastConversationNumber}`;
    } while (this.conversations.has(id));
    return id;
  }

  private transition(conversation: MutableConversation, trigger: StatusTrigger): void {
    this.apply(conversation, applyStatusTrigger(conversation, trigger));
  }

  private apply(conversation: MutableConversation, next: ConversationFlags): void {
    if (next.status !== conversation.status) {
      this.bump(conversation.status, -1);
      this.bump(next.status, 1);
    }
    if (next.needHuman !== conversation.needHuman) this.needHumanCount += next.needHuman ? 1 : -1;
    conversation.status = next.status;
    conversation.mode = next.mode;
    conversation.needHuman = next.needHuman;
  }

  private bump(status: ConversationStatus, delta: number): void {
    this.statusCounts.set(status, (this.statusCounts.get(status) ?? 0) + delta);
  }

  private appendOutbound(
    conversation: MutableConversation,
    origin: MessageOrigin,
    senderName: string,
    content: MessageContent,
    replyToMessageId: string | null = null,
  ): StoredMessage {
    const now = this.options.now();
    const message = this.append(conversation, {
      origin,
      sender: 'agent',
      senderName,
      content,
      sentAtMs: now,
      deliveryStatus: 'pending',
      replyToMessageId,
    });
    const outside = isOutsideReplyWindow(
      conversation.channel.type,
      conversation.lastCustomerMessageAtMs,
      now,
    );
    this.options.hooks.onOutbound(message, outside);
    return message;
  }

  private append(
    conversation: MutableConversation,
    input: {
      origin: MessageOrigin;
      sender: MessageSender;
      senderName: string;
      content: MessageContent;
      sentAtMs: number;
      deliveryStatus: DeliveryStatus;
      replyToMessageId: string | null;
    },
  ): StoredMessage {
    this.lastMessageId += 1;
    const { content } = input;
    const message: StoredMessage = {
      id: this.lastMessageId,
      messageId: randomUUID(),
      conversationId: conversation.id,
      origin: input.origin,
      sender: input.sender,
      senderName: input.senderName,
      type: content.kind === 'text' ? 'text' : content.type,
      body: content.kind === 'text' ? content.text : content.url,
      caption: content.kind === 'text' ? '' : content.caption,
      mimeType: content.kind === 'text' ? 'text/plain' : content.mimeType,
      sentAtMs: input.sentAtMs,
      deliveryStatus: input.deliveryStatus,
      replyToMessageId: input.replyToMessageId,
      isNote: input.origin === 'note',
    };
    conversation.messages.push(message);
    this.messagesById.set(message.id, message);
    return message;
  }
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i];
    if (item !== undefined && predicate(item)) return item;
  }
  return undefined;
}
