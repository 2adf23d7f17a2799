import { z } from 'zod';

/**
 * The conversation's story as the bridge keeps it and as the operator API serves it: what the
 * bridge did in one conversation, to whom and why. These schemas are the contract between the
 * writer (the worker's finish step, story-writer.ts), the reader (story-reader.ts) and the HTTP API
 * (which validates its answers and builds its OpenAPI document from them).
 *
 * Times are ISO instants (UTC). Field names are camelCase, as the canonical events' are.
 */

const Instant = z.iso.datetime({ offset: true }).describe('ISO 8601 instant, UTC');

/** What every entry has: when it happened, and the event it belongs to (absent for a timer's or a dead letter's own entries). */
const entryBase = {
  at: Instant,
  eventKey: z.string().optional().describe('The event the entry belongs to (the platform key of it)'),
};

/** An event the bridge handled. `text` as the redaction settings allow: null when they keep no text. */
export const StoryEventEntrySchema = z.object({
  kind: z.literal('event'),
  ...entryBase,
  /** The event's kind (message_in, agent_reply, ...). */
  type: z.string(),
  /** The platform's name for the event. */
  name: z.string(),
  senderName: z.string().nullable(),
  text: z.string().nullable(),
  /** True when the text was masked or dropped by `record.redact` / `story.text`. */
  redacted: z.boolean(),
  channel: z.string().nullable(),
  /** The platform reported a message the bridge itself sent: no rule ran. */
  ownSend: z.boolean().optional(),
});

/**
 * One rule's verdict for an event, in `explain`'s words: `MATCH escalate: text has keyword
 * 'refund'`, `no catalog: skipped, an earlier rule has stop`, `burst greet: joins the burst`.
 */
export const StoryVerdictEntrySchema = z.object({
  kind: z.literal('verdict'),
  ...entryBase,
  rule: z.string(),
  matched: z.boolean(),
  /** The rule's outcome joins a debounced burst (decided when the burst closes). */
  debounced: z.boolean().optional(),
  words: z.string(),
});

export const ACTION_OUTCOMES = ['done', 'skipped', 'retried', 'dead_lettered'] as const;
export type ActionOutcome = (typeof ACTION_OUTCOMES)[number];

/** A planned action and what became of it. */
export const StoryActionEntrySchema = z.object({
  kind: z.literal('action'),
  ...entryBase,
  /** The action's id in the plan (`rule#index`); '' for the event as a whole (a dead letter whose failing action is not known). */
  id: z.string(),
  /** note, reply, need_human, forward, tag, untag, timer; `event` for the event as a whole. */
  type: z.string(),
  rule: z.string(),
  outcome: z.enum(ACTION_OUTCOMES),
  /** Why, in words ("the reply window closed at ...", "already sent"), null when nothing to say. */
  reason: z.string().nullable(),
  /** Runs of the event it took (1 when it went through the first time). */
  attempts: z.number().int().nonnegative(),
  /** The last error, for a retried or dead-lettered action. */
  error: z.string().nullable(),
});

export const StoryTimerEntrySchema = z.object({
  kind: z.literal('timer'),
  ...entryBase,
  timerId: z.string(),
  rule: z.string(),
  state: z.enum(['pending', 'cancelled', 'fired']),
  /** When it is (was) due. */
  due: Instant.nullable(),
  /** What cancelled it (the event kind), or what fired it; null when nothing to say. */
  by: z.string().nullable(),
});

export const StoryTagEntrySchema = z.object({
  kind: z.literal('tag'),
  ...entryBase,
  name: z.string(),
  /** Set: until when (null for ever); removed: `removed` is true and `until` null. */
  until: Instant.nullable(),
  removed: z.boolean().optional(),
});

export const StoryBurstEntrySchema = z.object({
  kind: z.literal('burst'),
  ...entryBase,
  rule: z.string(),
  /** A customer message began or joined a debounced rule's burst, or the burst closed and was judged. */
  state: z.enum(['started', 'joined', 'closed']),
  messages: z.number().int().nonnegative().optional(),
});

export const StoryWindowEntrySchema = z.object({
  kind: z.literal('window'),
  ...entryBase,
  /** The reply window is open until then (null: closed, or unknown). */
  openUntil: Instant.nullable(),
});

export const StoryShadowDiffEntrySchema = z.object({
  kind: z.literal('shadow_diff'),
  ...entryBase,
  /** The differences between the active plan and the shadow rules' plan, in words. */
  differences: z.array(z.string()),
});

export const StoryEntrySchema = z.discriminatedUnion('kind', [
  StoryEventEntrySchema,
  StoryVerdictEntrySchema,
  StoryActionEntrySchema,
  StoryTimerEntrySchema,
  StoryTagEntrySchema,
  StoryBurstEntrySchema,
  StoryWindowEntrySchema,
  StoryShadowDiffEntrySchema,
]);
export type StoryEntry = z.infer<typeof StoryEntrySchema>;
export type StoryEntryKind = StoryEntry['kind'];

/** What the customer wrote about themselves, as far as the bridge saw it. */
export const StoryCustomerSchema = z.object({
  name: z.string().nullable(),
  /** Phone numbers as the customer wrote them (first seen kept). */
  phones: z.array(z.string()),
  emails: z.array(z.string()),
});
export type StoryCustomer = z.infer<typeof StoryCustomerSchema>;

/** The outcomes a conversation can be searched by. */
export const STORY_OUTCOMES = ['escalated', 'dead_letter', 'reply_blocked'] as const;
export type StoryOutcome = (typeof STORY_OUTCOMES)[number];

export const StoryTagSchema = z.object({ name: z.string(), until: Instant.nullable() });

export const StorySchema = z.object({
  business: z.string(),
  conversation: z.string(),
  customer: StoryCustomerSchema.nullable(),
  /** The reply window as last known (null: the bridge never saw a customer message). */
  window: z.object({ openUntil: Instant.nullable() }).nullable(),
  tags: z.array(StoryTagSchema),
  outcomes: z.array(z.enum(STORY_OUTCOMES)),
  firstAt: Instant,
  lastAt: Instant,
  /** Oldest first; the last `story.max_entries` (200) only. */
  entries: z.array(StoryEntrySchema),
  /** Entries older than those kept were dropped. */
  truncated: z.boolean(),
});
export type Story = z.infer<typeof StorySchema>;

/** One line of a search's answer. */
export const ConversationSummarySchema = z.object({
  conversation: z.string(),
  customerName: z.string().nullable(),
  firstAt: Instant,
  lastAt: Instant,
  events: z.number().int().nonnegative(),
  /** The kind of the last event. */
  lastEvent: z.string().nullable(),
  /** Rules that matched at least once. */
  rules: z.array(z.string()),
  tags: z.array(z.string()),
  outcomes: z.array(z.enum(STORY_OUTCOMES)),
});
export type ConversationSummary = z.infer<typeof ConversationSummarySchema>;

/**
 * A search. `q` is free text: a conversation id, a phone number however written (`+62
 * 812-3456-7890` finds `0812 3456 7890`), an e-mail address, or (any other text) words of the
 * customer's name. The filters narrow it; all are ANDed. `since`/`until` are ms since the epoch
 * and bound the conversation's last activity.
 */
export const StoryQuerySchema = z.object({
  q: z.string().trim().min(1).max(200).optional(),
  tag: z.string().min(1).max(200).optional(),
  rule: z.string().min(1).max(200).optional(),
  outcome: z.enum(STORY_OUTCOMES).optional(),
  since: z.number().int().nonnegative().optional(),
  until: z.number().int().nonnegative().optional(),
});
export type StoryQuery = z.infer<typeof StoryQuerySchema>;

export const SearchPageSchema = z.object({
  conversations: z.array(ConversationSummarySchema),
  /** Pass back as `cursor` for the next page; null at the end. */
  cursor: z.string().nullable(),
});
export type SearchPage = z.infer<typeof SearchPageSchema>;

const statsCounts = {
  events: z.number().int().nonnegative(),
  /** Actions done, by type (note, reply, need_human, forward, tag, untag, timer). */
  actions: z.record(z.string(), z.number().int().nonnegative()),
  /** need_human actions done. */
  escalations: z.number().int().nonnegative(),
  /** Replies held back because the reply window was closed. */
  repliesBlocked: z.number().int().nonnegative(),
  deadLetters: z.number().int().nonnegative(),
  /** Events whose shadow plan differed from the active one. */
  shadowDifferences: z.number().int().nonnegative(),
};

export const StatsHourSchema = z.object({ hour: Instant, ...statsCounts });
export type StatsHour = z.infer<typeof StatsHourSchema>;

export const StatsSchema = z.object({
  business: z.string(),
  since: Instant,
  until: Instant,
  ...statsCounts,
  /** Escalations per event (null when there were no events). */
  escalationRate: z.number().nullable(),
  /**
   * From the need_human mark to the first agent reply after it, over the conversations that had
   * one in the period (ms; from a histogram, so each figure is the upper bound of its bucket).
   */
  firstAgentReply: z.object({
    count: z.number().int().nonnegative(),
    p50Ms: z.number().nullable(),
    p90Ms: z.number().nullable(),
  }),
  /** Oldest first, one per hour of the period (hours with nothing are there too, with zeros). */
  hours: z.array(StatsHourSchema),
});
export type Stats = z.infer<typeof StatsSchema>;
