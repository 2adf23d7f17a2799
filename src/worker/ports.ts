import type { ConversationEvent, EventKind } from '../events/conversation-event.js';

/**
 * What the worker needs from its neighbours, stated as small interfaces so the worker's logic can
 * be read (and tested) on its own. The composition root adapts the platform client and the rules
 * engine to these.
 */

/** A message of the conversation history, as the worker needs it for reconciliation and windows. */
export interface HistoryMessage {
  id: number;
  messageId: string | null;
  sender: string;
  senderName: string | null;
  text: string;
  caption: string;
  isNote: boolean | null;
  sentAt: Date | null;
}

export interface MediaPayload {
  url: string;
  type: 'image' | 'video' | 'audio' | 'document';
  name?: string;
  caption?: string;
  mimeType?: string;
}

export interface PlatformPort {
  sendMessage(
    input: { conversationId: string; text?: string; media?: MediaPayload; replyToMessageId?: string },
    options?: { windowClosesAt?: Date },
  ): Promise<{ messageId?: string | undefined }>;
  addNote(conversationId: string, note: string): Promise<{ messageId?: string | undefined }>;
  markNeedHuman(conversationId: string): Promise<void>;
  history(conversationId: string): AsyncIterable<HistoryMessage>;
}

/** Facts about a conversation the evaluator needs (kept in Redis by the worker). */
export interface ConversationFacts {
  lastCustomerMessageAt: Date | null;
  isFirstCustomerMessage: boolean;
  onceMarks: Record<string, string>;
  cooldowns?: Record<string, string>;
}

export type ReplyMessage =
  | { text: string }
  | {
      media: { url: string; type: MediaPayload['type']; name?: string; caption?: string; mimeType?: string };
    };

export interface ReplyWindowInfo {
  applies: boolean;
  channelKind: string | null;
  hours: number;
  closesAt: string | null;
}

export type PlannedAction = { id: string; rule: string } & (
  | { type: 'note'; text: string }
  | { type: 'need_human' }
  | {
      type: 'reply';
      message: ReplyMessage;
      replyToMessageId: string | null;
      once: { key: string; ttlMs: number } | null;
      window: ReplyWindowInfo;
      whenClosed: PlannedAction[];
    }
  | { type: 'forward'; destination: string }
  | { type: 'timer'; delayMs: number; unless: EventKind[]; actions: PlannedAction[] }
);

export interface RuleOutcomeSummary {
  rule: string;
  matched: boolean;
  reason?: string;
}

export interface Plan {
  outcomes: RuleOutcomeSummary[];
  actions: PlannedAction[];
}

export interface ReplyWindowState {
  applies: boolean;
  open: boolean;
  closesAt: Date | null;
}

export interface RulesPort {
  evaluate(event: ConversationEvent, facts: ConversationFacts, now: Date): Plan;
  /** The window for a channel given the last customer message (pure; the worker adds its safety margin). */
  replyWindow(
    channel: ConversationEvent['channel'],
    lastCustomerMessageAt: Date | null,
    now: Date,
  ): ReplyWindowState;
  /** True when some rule uses `first_message` (so the worker must know it, from history if need be). */
  usesFirstMessage: boolean;
}

/** Sends a canonical event to a named destination (CRM); signs it and owns its own short retries. */
export interface ForwardPort {
  forward(destination: string, body: unknown, idempotencyKey: string): Promise<{ status: number }>;
}
