import type { ConversationEvent } from '../events/conversation-event.js';
import type { ForwardBody } from '../forward/forward-body.js';
import type { Burst, BurstSettings } from '../rules/burst.js';
import type { ConversationFacts, Plan, PlannedAction } from '../rules/plan.js';

/**
 * What the worker needs from its neighbours, stated as small interfaces so the worker's logic can
 * be read (and tested) on its own. The composition root adapts the platform client and the rules
 * engine to these (adapters/). Also the few types the worker's parts share (a plan as frozen, an
 * action's report); this file imports nothing of the worker back.
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
    /** `now`: the worker's clock, by which `windowClosesAt` is judged. */
    options?: { windowClosesAt?: Date; now?: () => Date },
  ): Promise<{ messageId?: string | undefined }>;
  addNote(conversationId: string, note: string): Promise<{ messageId?: string | undefined }>;
  markNeedHuman(conversationId: string): Promise<void>;
  history(conversationId: string): AsyncIterable<HistoryMessage>;
}

export type { ConversationFacts, Plan, PlannedAction, ReplyMessage, RuleOutcome } from '../rules/plan.js';

/** What the worker keeps of a plan (frozen on first evaluation): the actions and the matched rules. */
export interface FrozenPlan {
  actions: PlannedAction[];
  matched: { rule: string; cooldownMs: number | null }[];
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
  /** The debounced rules: each customer message joins their bursts. */
  bursts: readonly { rule: string; settings: BurstSettings }[];
  /** A debounced rule evaluated on its burst; null when no such rule exists any more (a reload). */
  evaluateBurst(rule: string, burst: Burst, facts: ConversationFacts, now: Date): Plan | null;
}

/** Sets `after:` and `window_closing` timers (timers/timers.ts: a delayed job and a registration). */
export interface TimerScheduler {
  /** The id of the timer an action sets in a run's scope (stable: a repeat finds the same timer). */
  idFor(scope: string, actionId: string): string;
  schedule(input: {
    timerId: string;
    conversationId: string;
    delayMs: number;
    unless: readonly string[];
    actions: PlannedAction[];
    event: ConversationEvent;
    rule: string;
    /** Fixed by the plan: the delay then counts to it. */
    dueAt?: string;
    dueLocal?: string;
    clock?: 'wall' | 'business';
    trigger?: 'window_closing';
    /**
     * An earlier run of this action registered the timer and was cut off before it recorded the
     * timer as set: keep a registration that is there, but register nothing new (no registration
     * means the timer fired or was cancelled since, and its done job is gone: done jobs are not kept).
     */
    resumed?: boolean;
    /** Called once the timer is registered and before its job is added (the run records `started`). */
    onRegistered?: () => Promise<void>;
  }): Promise<'scheduled' | 'gone'>;
}

/** One action's fate in this run, for logs, metrics, the job's return value and dead letters. */
export interface ActionReport {
  id: string;
  type: PlannedAction['type'];
  rule: string;
  state: 'done' | 'skipped' | 'failed';
  detail?: string;
  /** When a reply was held back (ms since epoch): the moment the worker decided. */
  at?: number;
}

/** Sends a canonical event to a named destination (CRM); signs it and owns its own short retries. */
export interface ForwardPort {
  forward(destination: string, body: ForwardBody, idempotencyKey: string): Promise<{ status: number }>;
}

/**
 * Keeps the events the worker ran, with the facts and plan (`record:`). Called once per
 * event, right after its plan is first evaluated (not for a re-run that reads a frozen plan back);
 * it must not throw nor wait: the adapter sends one command and logs its failures.
 */
export interface EventRecorder {
  record(input: {
    event: ConversationEvent;
    facts: ConversationFacts;
    now: Date;
    plan: FrozenPlan;
    /** Reply action ids the closed window replaced by when_closed. */
    blocked: readonly string[];
  }): void;
}
