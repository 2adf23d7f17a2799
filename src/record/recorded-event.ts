import { z } from 'zod';
import { type ConversationEvent, ConversationEventSchema } from '../events/conversation-event.js';
import type { ConversationFacts, PlannedAction } from '../rules/plan.js';
import { TAG_NAME_HINT, TAG_NAME_PATTERN } from '../rules/tags.js';
import { REDACTION_KINDS, type RedactionKind } from './redact-event.js';

/**
 * The one shape of an event kept for later: the canonical event, the facts the worker
 * evaluated it with, the instant it was evaluated at, and a summary of the plan it ran. It is what
 * the bridge stores in Redis when `record.enabled`, what `convo-bridge events export` writes (one per
 * line, JSON Lines), and what `explain --event`, rule tests (`event:`) and `backtest --from` read.
 */

const iso = z.iso.datetime({ offset: true });

const tagName = z.string().regex(TAG_NAME_PATTERN, { error: `expected ${TAG_NAME_HINT}` });

/**
 * The conversation's tags before the event: a list of names (none expires), or name -> ISO instant
 * it expires (null: never). Read as the latter, names in lower case.
 */
const TagsJsonSchema = z
  .union([z.array(tagName), z.record(tagName, iso.nullable())])
  .transform(
    (tags): Record<string, string | null> =>
      Object.fromEntries(
        Array.isArray(tags)
          ? tags.map((name) => [name.toLowerCase(), null])
          : Object.entries(tags).map(([name, until]) => [name.toLowerCase(), until]),
      ),
  )
  .describe(
    'Tags of the conversation: [vip, gold], or {"vip": "2026-11-24T03:00:00Z", "gold": null} with expiries.',
  );

/** Facts as JSON (the same fields `explain --facts` reads). */
export const FactsJsonSchema = z.strictObject({
  lastCustomerMessageAt: iso.nullable().default(null),
  isFirstCustomerMessage: z.boolean().default(false),
  onceMarks: z.record(z.string(), iso).default({}),
  cooldowns: z.record(z.string(), iso).optional(),
  tags: TagsJsonSchema.optional(),
});
export type FactsJson = z.output<typeof FactsJsonSchema>;

export const ActionSummarySchema = z.strictObject({
  id: z.string(),
  rule: z.string(),
  type: z.enum(['note', 'need_human', 'reply', 'forward', 'tag', 'untag', 'timer']),
  /** Tag and untag: the tags; a tag's `for:` (ms) when it has one. */
  tags: z.array(z.string()).optional(),
  forMs: z.number().int().positive().optional(),
  /** Timers: the delay and the kinds that cancel them; their actions as summaries. */
  delayMs: z.number().int().nonnegative().optional(),
  unless: z.array(z.string()).optional(),
  get actions() {
    return z.array(ActionSummarySchema).optional();
  },
});
export type ActionSummary = z.output<typeof ActionSummarySchema>;

export const PlanSummarySchema = z.strictObject({
  /** Rules that matched, in config order. */
  matched: z.array(z.string()),
  /** Actions in order (a closed window's replacements included, see `blocked`). */
  actions: z.array(ActionSummarySchema),
  /** Reply action ids the reply window replaced by `when_closed`. */
  blocked: z.array(z.string()).default([]),
});
export type PlanSummary = z.output<typeof PlanSummarySchema>;

export const RecordedEventSchema = z.strictObject({
  /** Shape version of this line. */
  v: z.literal(1),
  /** Order of recording across the bridge (ties of `now` are broken by it); 0 when unknown. */
  seq: z.number().int().nonnegative().default(0),
  /** When the worker evaluated the rules for it. */
  now: iso,
  event: ConversationEventSchema,
  facts: FactsJsonSchema.prefault({}),
  plan: PlanSummarySchema.optional(),
  /** Which redactions the event had before storing (record.redact: `texts`, `phones`, `emails`, `cards`, `national_ids`). */
  redacted: z.array(z.enum(REDACTION_KINDS)).default([]),
});
export type RecordedEvent = z.output<typeof RecordedEventSchema>;

/** True when a parsed JSON value looks like a recorded line rather than an event. */
export function looksRecorded(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'event' in value && 'now' in value;
}

export function factsFromJson(f: FactsJson): ConversationFacts {
  return {
    lastCustomerMessageAt: f.lastCustomerMessageAt === null ? null : new Date(f.lastCustomerMessageAt),
    isFirstCustomerMessage: f.isFirstCustomerMessage,
    onceMarks: f.onceMarks,
    ...(f.cooldowns !== undefined ? { cooldowns: f.cooldowns } : {}),
    ...(f.tags !== undefined
      ? {
          tags: Object.fromEntries(
            Object.entries(f.tags).map(([name, until]) => [name, until === null ? null : Date.parse(until)]),
          ),
        }
      : {}),
  };
}

export function factsToJson(f: ConversationFacts): FactsJson {
  return {
    lastCustomerMessageAt: f.lastCustomerMessageAt === null ? null : f.lastCustomerMessageAt.toISOString(),
    isFirstCustomerMessage: f.isFirstCustomerMessage,
    onceMarks: { ...f.onceMarks },
    ...(f.cooldowns !== undefined ? { cooldowns: { ...f.cooldowns } } : {}),
    ...(f.tags !== undefined && Object.keys(f.tags).length > 0
      ? {
          tags: Object.fromEntries(
            Object.entries(f.tags).map(([name, until]) => [
              name,
              until === null ? null : new Date(until).toISOString(),
            ]),
          ),
        }
      : {}),
  };
}

export function summarizeAction(action: PlannedAction): ActionSummary {
  if (action.type === 'timer') {
    return {
      id: action.id,
      rule: action.rule,
      type: 'timer',
      delayMs: action.delayMs,
      unless: [...action.unless],
      actions: action.actions.map(summarizeAction),
    };
  }
  if (action.type === 'tag') {
    return {
      id: action.id,
      rule: action.rule,
      type: 'tag',
      tags: [...action.tags],
      ...(action.forMs !== null ? { forMs: action.forMs } : {}),
    };
  }
  if (action.type === 'untag')
    return { id: action.id, rule: action.rule, type: 'untag', tags: [...action.tags] };
  return { id: action.id, rule: action.rule, type: action.type };
}

/** The recorded summary of a plan (frozen or fresh): matched rule names, actions, blocked replies. */
export function summarizePlan(plan: {
  matched: readonly { rule: string }[];
  actions: readonly PlannedAction[];
  blockedReplies?: readonly { actionId: string }[];
}): PlanSummary {
  const blocked = new Set<string>(plan.blockedReplies?.map((b) => b.actionId));
  for (const action of plan.actions) {
    const at = action.id.indexOf('~closed.');
    if (at > 0) blocked.add(action.id.slice(0, at));
  }
  return {
    matched: plan.matched.map((m) => m.rule),
    actions: plan.actions.map(summarizeAction),
    blocked: [...blocked],
  };
}

export function recordedLine(input: {
  seq?: number;
  now: Date;
  event: ConversationEvent;
  facts: ConversationFacts;
  plan?: PlanSummary;
  redacted?: RedactionKind[];
}): RecordedEvent {
  return {
    v: 1,
    seq: input.seq ?? 0,
    now: input.now.toISOString(),
    event: input.event,
    facts: factsToJson(input.facts),
    ...(input.plan !== undefined ? { plan: input.plan } : {}),
    redacted: input.redacted ?? [],
  };
}

/** Zod issues as `where: path: message` lines. */
export function describeZodIssues(where: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => `${where}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('\n');
}
