/**
 * Conversation status and mode, and the transitions between them
 * (messaging-service-interface.md, "States and transitions"). Pure: the state store applies these.
 */
export const CONVERSATION_STATUSES = [
  'Belum Dibaca',
  'Butuh CS',
  'Belum Ditangani',
  'Ditangani',
  'Selesai',
  'Diblokir',
  'Dilewati',
] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export const CONVERSATION_MODES = ['ai', 'human'] as const;
/** `ai`: the AI replies; `human`: human-handled, the AI is paused. */
export type ConversationMode = (typeof CONVERSATION_MODES)[number];

export interface ConversationFlags {
  readonly status: ConversationStatus;
  readonly mode: ConversationMode;
  /** The need-human mark (webhook `need_human`, earlier-form `lock_by_human`). */
  readonly needHuman: boolean;
}

export type StatusTrigger =
  /** A customer message arrived. */
  | { readonly kind: 'customer_message' }
  /** The team opened the conversation (dashboard). */
  | { readonly kind: 'read' }
  /** The AI replied; `markHandled` is the AI agent's 'mark as handled' setting. */
  | { readonly kind: 'ai_reply'; readonly markHandled: boolean }
  /** A human agent (dashboard) or an external system (`POST /v1/message`) replied. */
  | { readonly kind: 'reply' }
  /** `POST /v1/conversation/need-human`, or the AI's hand-over rule. */
  | { readonly kind: 'need_human' }
  | { readonly kind: 'take_over' }
  /** `customerWaiting`: the last customer message has no reply after it. */
  | { readonly kind: 'return_to_ai'; readonly customerWaiting: boolean }
  | { readonly kind: 'done' }
  | { readonly kind: 'block' }
  | { readonly kind: 'skip' };

/** Statuses a new customer message does not move a conversation out of. */
const STICKY_ON_CUSTOMER_MESSAGE: ReadonlySet<ConversationStatus> = new Set([
  'Butuh CS',
  'Diblokir',
  'Dilewati',
]);

/**
 * The flags after `trigger`. Transitions the spec shows are followed exactly; the others (marked
 * "chosen") are the emulator's plausible reading, listed in docs/emulator.md.
 */
export function applyStatusTrigger(flags: ConversationFlags, trigger: StatusTrigger): ConversationFlags {
  switch (trigger.kind) {
    case 'customer_message':
      // chosen: an unread incoming message makes it Belum Dibaca, unless it waits for a human or
      // is blocked/skipped; Selesai reopens.
      return STICKY_ON_CUSTOMER_MESSAGE.has(flags.status) ? flags : { ...flags, status: 'Belum Dibaca' };
    case 'read':
      // chosen: reading an unread conversation leaves the customer waiting.
      return flags.status === 'Belum Dibaca' ? { ...flags, status: 'Belum Ditangani' } : flags;
    case 'ai_reply':
      // spec: an AI reply leaves it Ditangani or Belum Ditangani per 'mark as handled'.
      return { ...flags, status: trigger.markHandled ? 'Ditangani' : 'Belum Ditangani' };
    case 'reply':
      // chosen: a reply answers a waiting conversation; Butuh CS stays until the team returns it.
      return flags.status === 'Belum Dibaca' || flags.status === 'Belum Ditangani'
        ? { ...flags, status: 'Ditangani' }
        : flags;
    case 'need_human':
      // spec: any -> Butuh CS, the AI stops replying; repeating it changes nothing.
      return { status: 'Butuh CS', mode: 'human', needHuman: true };
    case 'take_over':
      // spec: AI mode -> human-handled; the status is not touched (chosen).
      return { ...flags, mode: 'human' };
    case 'return_to_ai': {
      // spec: human-handled -> AI mode, and only the dashboard reverses the need-human mark.
      if (flags.mode === 'ai' && !flags.needHuman) return flags;
      const status =
        flags.status === 'Butuh CS'
          ? trigger.customerWaiting
            ? 'Belum Ditangani'
            : 'Ditangani'
          : flags.status;
      return { status, mode: 'ai', needHuman: false };
    }
    case 'done':
      // spec: any -> Selesai, and the AI is active again for the next customer message.
      return { status: 'Selesai', mode: 'ai', needHuman: false };
    case 'block':
      return { ...flags, status: 'Diblokir' };
    case 'skip':
      return { ...flags, status: 'Dilewati' };
  }
}

/** Why the AI stays quiet in this conversation, or undefined when it may reply. */
export function aiQuietReason(flags: ConversationFlags): string | undefined {
  if (flags.needHuman) return 'the conversation is marked as needing a human';
  if (flags.mode === 'human') return 'the conversation is handled by a human';
  if (flags.status === 'Diblokir') return 'the user is blocked';
  if (flags.status === 'Dilewati') return 'the conversation is skipped';
  return undefined;
}
