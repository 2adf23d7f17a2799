import type { EventKind } from '../events/conversation-event.js';
import type { ChannelKind } from './rules-settings-schema.js';

/**
 * The contract between the rules (pure) and the worker (effects): what the worker knows about a
 * conversation before the event, and the plan the evaluator returns.
 */
export interface ConversationFacts {
  /** Before this event; for message_in events the evaluator uses max(this, event.occurredAt). */
  lastCustomerMessageAt: Date | null;
  isFirstCustomerMessage: boolean;
  /** onceKey -> ISO time the once-action last ran in this conversation. */
  onceMarks: Record<string, string>;
  /** Rule name -> ISO time it last fired (rules with `cooldown`). */
  cooldowns?: Record<string, string>;
  /**
   * Tag -> when it expires (ms since epoch), null for never (rules/tags.ts). Expired ones may be
   * present: the evaluator ignores them.
   */
  tags?: Readonly<Record<string, number | null>>;
}

export interface RuleOutcome {
  rule: string;
  status: 'matched' | 'not_matched';
  /** Why, in words: "text has keyword 'refund'", "event kind is ai_reply, rule is on message_in". */
  reason: string;
  /** Remarks about single actions: a reply replaced by when_closed, a once-action suppressed. */
  notes: readonly string[];
  /** Set when the rule matched and has `cooldown`: the worker records the time under the rule name. */
  cooldownMs: number | null;
  /** A debounced rule's outcome for a customer message: the message joins its burst. */
  debounced?: true;
}

export interface ReplyWindowPlan {
  applies: boolean;
  channelKind: ChannelKind | null;
  hours: number;
  /** ISO instant. */
  closesAt: string | null;
}

export type ReplyMessage =
  | { text: string }
  | {
      media: {
        url: string;
        type: 'image' | 'video' | 'audio' | 'document';
        name?: string;
        caption?: string;
        mimeType?: string;
      };
    };

export type PlannedAction = {
  /** Stable: `${rule}#${index}`, `${rule}#${index}.${j}` for timer children, `${id}~closed.${j}`. */
  id: string;
  rule: string;
} & (
  | { type: 'note'; text: string }
  | { type: 'need_human' }
  | {
      type: 'reply';
      message: ReplyMessage;
      replyToMessageId: string | null;
      once: { key: string; ttlMs: number } | null;
      window: ReplyWindowPlan;
      /** reply_window.when_closed rendered for this event, for the worker's re-check before sending. */
      whenClosed: PlannedAction[];
    }
  | {
      type: 'forward';
      destination: string;
      /**
       * The conversation's tags when the forward was planned (sorted), set when the rules use tags;
       * absent (a timer's forward, or rules without tags): the worker sends those in force then.
       */
      tags?: string[];
    }
  | {
      type: 'tag';
      tags: string[];
      /** How long the tags last; null: until untagged. */
      forMs: number | null;
      /** ISO: when they expire, fixed at planning for an action of the event itself (not a timer's). */
      expiresAt?: string;
    }
  | { type: 'untag'; tags: string[] }
  | {
      type: 'timer';
      delayMs: number;
      unless: EventKind[];
      actions: PlannedAction[];
      /**
       * ISO instant the timer is due, when the plan fixes it (business-time timers and
       * window_closing); the worker counts the delay from it, so a retried run does not push it back.
       * Absent in plans frozen by an older bridge: then `delayMs` from the run.
       */
      dueAt?: string;
      /** The due time in the configured zone, for people (explain, timers list). */
      dueLocal?: string;
      /** `business`: the configured delay (`businessMs`) counts open business hours; `delayMs` is the wall-clock wait. */
      clock?: 'wall' | 'business';
      businessMs?: number;
      /** Set by `on: window_closing` rules: what set the timer. */
      trigger?: 'window_closing';
    }
);

export interface Plan {
  /** Every rule, in config order (built on first read: it costs O(rules)). */
  outcomes: RuleOutcome[];
  /** Only the rules that matched, in config order; cheap, for the worker (metrics, cooldowns). */
  matched: RuleOutcome[];
  /** What to do, in order, templates rendered. */
  actions: PlannedAction[];
  /**
   * Replies the rules wanted but replaced by `reply_window.when_closed` because the window was
   * already closed when planning (one entry per reply, also when when_closed is empty). The worker
   * counts them in convo_bridge_window_blocked_replies_total once the plan is frozen.
   */
  blockedReplies: readonly BlockedReply[];
}

export interface BlockedReply {
  rule: string;
  /** The reply's action id (`rule#index`). */
  actionId: string;
}
