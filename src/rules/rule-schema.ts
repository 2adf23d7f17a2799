import { RE2JS } from 're2js';
import { z } from 'zod';
import { DURATION_HINT, DURATION_REGEX_SOURCE, parseDuration } from '../base/duration.js';
import { EVENT_KINDS, type EventKind } from '../events/conversation-event.js';
import { burstFieldIssues, burstSettingsOf } from './burst-rule-fields.js';
import { engineValueProblem } from './engine-values.js';
import { normalizeWords } from './normalize-text.js';
import { type TagsConditionConfig, tagListSchema, tagsConditionSchema } from './tags.js';

/**
 * The YAML shape of the rules language (snake_case as written). Validation of structure, value
 * formats, regexes and media URLs happens here; cross references (destinations, template fields,
 * business hours) are checked by compile-rules.ts, which sees the whole config.
 */

export const durationSchema = z
  .string({ error: `expected ${DURATION_HINT}` })
  .regex(new RegExp(DURATION_REGEX_SOURCE), { error: `expected ${DURATION_HINT}` })
  .transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `duration "${text}" is too large` });
      return z.NEVER;
    }
    return ms;
  })
  .meta({ description: DURATION_HINT });

/** One value or a non-empty list of them, read as a list. */
export function oneOrMany<T extends z.ZodType<string>>(item: T) {
  return z
    .union([item, z.array(item).min(1, { error: 'must not be an empty list' })])
    .transform((value): z.output<T>[] => (Array.isArray(value) ? value : [value]) as z.output<T>[]);
}

const nonEmpty = z.string().trim().min(1, { error: 'must not be empty' });
const eventKindSchema = z.enum(EVENT_KINDS);
/** An engine the platform sends (canonical or its own spelling); see engine-values.ts. */
export const engineValueSchema = nonEmpty.superRefine((value, ctx) => {
  const problem = engineValueProblem(value);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, input: value });
});

const keywordSchema = z
  .string()
  .min(1, { error: 'must not be empty' })
  .refine((k) => normalizeWords(k).length > 0, {
    error: 'a keyword needs at least one letter or digit',
  });
const keywordListSchema = z.array(keywordSchema).min(1, { error: 'must list at least one keyword' });

const regexSchema = z
  .string()
  .min(1, { error: 'must not be empty' })
  .superRefine((pattern, ctx) => {
    try {
      RE2JS.compile(pattern);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      ctx.addIssue({
        code: 'custom',
        message: `invalid regular expression (${detail}); the RE2 syntax is used: no lookaround or backreferences`,
      });
    }
  });

export const textConditionSchema = z
  .strictObject({
    any_keywords: keywordListSchema.optional(),
    all_keywords: keywordListSchema.optional(),
    regex: regexSchema.optional(),
  })
  .refine((t) => t.any_keywords !== undefined || t.all_keywords !== undefined || t.regex !== undefined, {
    error: 'text needs any_keywords, all_keywords or regex',
  });

export interface ConditionConfig {
  engine?: string[] | undefined;
  channel_id?: string[] | undefined;
  channel_name?: string[] | undefined;
  sender?: string[] | undefined;
  content_type?: string[] | undefined;
  has_media?: boolean | undefined;
  need_human?: boolean | undefined;
  text?: z.output<typeof textConditionSchema> | undefined;
  business_hours?: 'open' | 'closed' | undefined;
  first_message?: boolean | undefined;
  tags?: TagsConditionConfig | undefined;
  all?: ConditionConfig[] | undefined;
  any?: ConditionConfig[] | undefined;
  not?: ConditionConfig | undefined;
}

const CONDITION_KEYS = [
  'engine',
  'channel_id',
  'channel_name',
  'sender',
  'content_type',
  'has_media',
  'need_human',
  'text',
  'business_hours',
  'first_message',
  'tags',
  'all',
  'any',
  'not',
] as const;

export const conditionSchema: z.ZodType<ConditionConfig> = z
  .lazy(() =>
    z
      .strictObject({
        engine: oneOrMany(engineValueSchema).optional(),
        channel_id: oneOrMany(nonEmpty).optional(),
        channel_name: oneOrMany(nonEmpty).optional(),
        sender: oneOrMany(nonEmpty).optional(),
        content_type: oneOrMany(nonEmpty).optional(),
        has_media: z.boolean().optional(),
        need_human: z.boolean().optional(),
        text: textConditionSchema.optional(),
        business_hours: z.enum(['open', 'closed']).optional(),
        first_message: z.boolean().optional(),
        tags: tagsConditionSchema.optional(),
        all: z.array(conditionSchema).min(1, { error: 'must list at least one condition' }).optional(),
        any: z.array(conditionSchema).min(1, { error: 'must list at least one condition' }).optional(),
        not: conditionSchema.optional(),
      })
      .refine((c) => CONDITION_KEYS.some((key) => c[key] !== undefined), {
        error: `a condition needs at least one test: ${CONDITION_KEYS.join(', ')}`,
      }),
  )
  .meta({ id: 'condition', description: 'Every test given must hold (all/any/not combine them).' });

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;

const httpsUrlSchema = z.string().superRefine((url, ctx) => {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: `"${url}" is not a URL: write a full https:// address` });
  } else if (parsed.protocol !== 'https:') {
    ctx.addIssue({
      code: 'custom',
      message: `media URL must use https (the platform fetches it from a public https address), got ${parsed.protocol.replace(':', '')}`,
    });
  }
});

export const mediaSchema = z
  .strictObject({
    url: httpsUrlSchema,
    type: z.enum(MEDIA_TYPES),
    name: nonEmpty.optional(),
    caption: z.string().optional(),
    mime_type: nonEmpty.optional(),
  })
  .transform((m) => ({
    url: m.url,
    type: m.type,
    name: m.name,
    caption: m.caption,
    mimeType: m.mime_type,
  }));

export const replySchema = z
  .strictObject({
    text: z.string().min(1, { error: 'must not be empty' }).optional(),
    media: mediaSchema.optional(),
    once_per_conversation: durationSchema.optional(),
    reply_to_message: z.boolean().optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.text === undefined) === (r.media === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a reply needs exactly one of text or media' });
    }
  })
  .transform((r) => ({
    text: r.text,
    media: r.media,
    oncePerConversationMs: r.once_per_conversation,
    replyToMessage: r.reply_to_message ?? false,
  }));
export type ReplyConfig = z.output<typeof replySchema>;

export type ActionConfig =
  | { type: 'note'; text: string }
  | { type: 'need_human' }
  | { type: 'reply'; reply: ReplyConfig }
  | { type: 'forward'; destination: string }
  | { type: 'tag'; tags: string[]; forMs: number | null }
  | { type: 'untag'; tags: string[] }
  | {
      type: 'after';
      delayMs: number;
      unless: EventKind[];
      /** `business`: the delay counts open business hours only. */
      clock: TimerClock;
      actions: ActionConfig[];
    };

/** What a timer's delay counts: wall-clock time, or open business hours (`business_hours:`). */
export const TIMER_CLOCKS = ['wall', 'business'] as const;
export type TimerClock = (typeof TIMER_CLOCKS)[number];

/**
 * Triggers a rule can be `on` besides event kinds: `window_closing` fires `before` ahead of the end
 * of the reply window that each customer message opens.
 */
export const CLOCK_TRIGGERS = ['window_closing'] as const;
export type ClockTrigger = (typeof CLOCK_TRIGGERS)[number];
export type RuleTrigger = EventKind | ClockTrigger;

const ACTION_KINDS = ['note', 'need_human', 'reply', 'forward', 'tag', 'untag', 'after'] as const;
const SIMPLE_ACTION_KINDS = ACTION_KINDS.filter((k) => k !== 'after');

const simpleActionShape = {
  note: z.string().min(1, { error: 'must not be empty' }).optional(),
  need_human: z.literal(true, { error: 'write need_human: true' }).optional(),
  reply: replySchema.optional(),
  forward: nonEmpty.optional(),
  tag: tagListSchema.optional().describe('Tag the conversation (a name or a list); see for:.'),
  untag: tagListSchema.optional().describe('Remove tags from the conversation (a name or a list).'),
  for: durationSchema.optional().describe('With tag: how long the tags last (default: until untag).'),
};

function toAction(a: {
  note?: string | undefined;
  need_human?: true | undefined;
  reply?: ReplyConfig | undefined;
  forward?: string | undefined;
  tag?: string[] | undefined;
  untag?: string[] | undefined;
  for?: number | undefined;
}): ActionConfig {
  if (a.note !== undefined) return { type: 'note', text: a.note };
  if (a.need_human !== undefined) return { type: 'need_human' };
  if (a.reply !== undefined) return { type: 'reply', reply: a.reply };
  if (a.tag !== undefined) return { type: 'tag', tags: a.tag, forMs: a.for ?? null };
  if (a.untag !== undefined) return { type: 'untag', tags: a.untag };
  return { type: 'forward', destination: a.forward ?? '' };
}

const MAX_TAG_FOR_MS = 365 * 86_400_000;

/** `for:` belongs to `tag:` and must be above 0 (a tag that ends as it is set is never seen). */
function checkTagFor(a: { tag?: unknown; for?: number | undefined }, ctx: z.RefinementCtx): void {
  if (a.for === undefined) return;
  if (a.tag === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['for'],
      message: 'for: belongs to tag: (how long the tags last): write { tag: vip, for: 24h }',
    });
  } else if (a.for === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['for'],
      message: 'a tag for 0 is never seen: give a duration above 0 (e.g. for: 24h), or leave for: out',
    });
  } else if (a.for > MAX_TAG_FOR_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['for'],
      message: `a tag lasts at most 365d (a conversation's state is kept 30 days after its last customer message anyway): use a shorter for:, or leave it out (until untag)`,
    });
  }
}

function exactlyOneKind(present: readonly string[], allowed: readonly string[], ctx: z.RefinementCtx): void {
  if (present.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      message:
        present.length === 0
          ? `an action needs one of ${allowed.join(', ')}`
          : `an action does one thing; this one has ${present.join(' and ')}: split it into separate list items`,
    });
  }
}

/** Actions of a timer or of reply_window.when_closed: no nested timers. */
export const simpleActionSchema = z
  .strictObject(simpleActionShape)
  .superRefine((a, ctx) => {
    const present = SIMPLE_ACTION_KINDS.filter((k) => a[k] !== undefined);
    exactlyOneKind(present, SIMPLE_ACTION_KINDS, ctx);
    checkTagFor(a, ctx);
  })
  .transform(toAction)
  .meta({ id: 'simple_action' });

export const actionSchema = z
  .strictObject({
    ...simpleActionShape,
    after: durationSchema.optional(),
    unless: oneOrMany(eventKindSchema).optional(),
    clock: z
      .enum(TIMER_CLOCKS)
      .optional()
      .describe('What the delay counts: wall (default) or business (open business hours only).'),
    // biome-ignore lint/suspicious/noThenProperty: `then` is the word the rules language uses for a timer's actions.
    then: z.array(simpleActionSchema).min(1, { error: 'must list at least one action' }).optional(),
  })
  .superRefine((a, ctx) => {
    const present = ACTION_KINDS.filter((k) => a[k] !== undefined);
    exactlyOneKind(present, ACTION_KINDS, ctx);
    checkTagFor(a, ctx);
    if (a.after !== undefined && a.then === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'a timer (after:) needs then: [actions to run when it fires]',
      });
    }
    if (a.after === undefined && (a.then !== undefined || a.unless !== undefined || a.clock !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'unless:, clock: and then: belong to a timer: add after: DURATION',
      });
    }
  })
  .transform((a): ActionConfig => {
    if (a.after !== undefined) {
      return {
        type: 'after',
        delayMs: a.after,
        unless: a.unless ?? [],
        clock: a.clock ?? 'wall',
        actions: a.then ?? [],
      };
    }
    return toAction(a);
  })
  .meta({ id: 'action' });

export const RULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export const ruleSchema = z
  .strictObject({
    name: z.string().regex(RULE_NAME_PATTERN, {
      error: 'a rule name uses letters, digits, - and _ (e.g. escalate-complaints)',
    }),
    description: z.string().optional(),
    on: oneOrMany(z.enum([...EVENT_KINDS, ...CLOCK_TRIGGERS])),
    before: durationSchema
      .optional()
      .describe('With on: window_closing: how long before the reply window closes the rule fires.'),
    if: conditionSchema.optional(),
    // biome-ignore lint/suspicious/noThenProperty: `then` is the word the rules language uses for a rule's actions.
    then: z.array(actionSchema).min(1, { error: 'must list at least one action' }),
    stop: z.boolean().optional(),
    cooldown: durationSchema.optional(),
    debounce: durationSchema
      .optional()
      .describe(
        "Bursts (message_in): evaluate the rule once per burst of the customer's messages, when they have been quiet this long.",
      ),
    max_wait: durationSchema
      .optional()
      .describe(
        'With debounce: evaluate at the latest this long after the burst began (default 5 × debounce).',
      ),
    unless: oneOrMany(eventKindSchema)
      .optional()
      .describe('With debounce: events of these kinds cancel an open burst (e.g. agent_reply).'),
  })
  .superRefine((r, ctx) => {
    for (const issue of burstFieldIssues(r)) ctx.addIssue({ code: 'custom', ...issue });
    const clock = r.on.includes('window_closing');
    if (clock && r.on.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['on'],
        message: 'on: window_closing is a clock, not an event: give it a rule of its own',
      });
    }
    if (clock && r.before === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['before'],
        message:
          'on: window_closing needs before: DURATION (e.g. before: 2h: fire 2 hours before the window closes)',
      });
    }
    // `before: 0` (a bare number, not a duration) and `before: 0s` are refused alike, for one
    // reason: at 0 the rule fires as the window closes, when no reply can be sent any more.
    if (clock && r.before === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['before'],
        message:
          '0 fires when the reply window has already closed: give a duration above 0 (e.g. before: 2h)',
      });
    }
    if (!clock && r.before !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['before'], message: 'before: belongs to on: window_closing' });
    }
  })
  .transform((r) => ({
    name: r.name,
    description: r.description,
    on: r.on as RuleTrigger[],
    beforeMs: r.before,
    if: r.if,
    actions: r.then,
    stop: r.stop ?? false,
    cooldownMs: r.cooldown,
    burst: burstSettingsOf(r),
  }))
  .meta({ id: 'rule' });
export type RuleConfig = z.output<typeof ruleSchema>;
