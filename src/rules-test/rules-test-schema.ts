import { z } from 'zod';
import { FactsJsonSchema } from '../record/recorded-event.js';
import { tagNameSchema } from '../rules/tags.js';

/**
 * The schema of rule test files (`*.rules-test.yaml`). Tests live in their own files
 * beside the config rather than in a `tests:` section of it: the config is what gets deployed and
 * hot-reloaded, and a few hundred lines of fixtures would make every reload and every `validate`
 * heavier; separate files also let one config have several test files (per team, per channel),
 * and a rules repository can run them in CI without a platform secret. Descriptions end up in
 * config/rules-test.schema.json (`convo-bridge schema --tests`).
 */

const ACTION_TYPES = ['note', 'need_human', 'reply', 'forward', 'tag', 'untag', 'timer'] as const;

export const ActionMatcherSchema = z.union([
  z.enum(ACTION_TYPES).describe('Shorthand for { type: ... }.'),
  z
    .strictObject({
      type: z.enum(ACTION_TYPES).optional(),
      rule: z.string().optional().describe('The rule that planned it.'),
      id: z.string().optional().describe('The action id, e.g. escalate-complaints#0.'),
      text: z.string().optional().describe('Exact text of a note or a text reply.'),
      text_contains: z.string().optional().describe('Part of the text of a note, reply or media caption.'),
      destination: z.string().optional().describe('forward: the destination name.'),
      tags: z.array(tagNameSchema).optional().describe('tag, untag: exactly these tags (any order).'),
    })
    .describe('Fields given must match; fields left out match anything.'),
]);
export type ActionMatcher = z.output<typeof ActionMatcherSchema>;

export const ExpectSchema = z
  .strictObject({
    matched: z
      .array(z.string())
      .optional()
      .describe('Exactly these rules match, in config order (use [] for none).'),
    matched_include: z.array(z.string()).optional().describe('At least these rules match.'),
    not_matched: z.array(z.string()).optional().describe('None of these rules match.'),
    actions: z
      .array(ActionMatcherSchema)
      .optional()
      .describe('Exactly these actions, in this order (each matcher checks only the fields it gives).'),
    actions_include: z
      .array(ActionMatcherSchema)
      .optional()
      .describe('These actions occur in this order; others may come between them.'),
    no_action: z.literal(true).optional().describe('Nothing would be done for this event.'),
    blocked: z
      .array(z.string())
      .optional()
      .describe('Reply action ids the closed reply window replaces by when_closed (use [] for none).'),
    bursts: z
      .array(z.number().int().positive())
      .optional()
      .describe(
        'With burst: the number of messages in each burst the debounced rules were evaluated on, in the order the bursts end.',
      ),
    tags: z
      .array(tagNameSchema)
      .optional()
      .describe(
        "Exactly these tags after the event, in any order: the case's facts.tags in force at now, changed by the plan's tag and untag actions (use [] for none).",
      ),
  })
  .refine((e) => Object.keys(e).length > 0, { error: 'expect needs at least one check' });
export type Expect = z.output<typeof ExpectSchema>;

const nowSchema = z.iso
  .datetime({
    offset: true,
    error: 'expected an ISO-8601 instant with a zone, on a day that exists (e.g. 2026-11-23T03:15:00Z)',
  })
  .describe('Evaluate as of this instant (default: the event time). ISO-8601, e.g. 2026-11-23T03:15:00Z');

export const RuleTestCaseSchema = z
  .strictObject({
    name: z.string().min(1).describe('What the case shows, printed by convo-bridge test.'),
    event: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'Inline: a webhook body as the platform sends it, a canonical ConversationEvent (v: 1), or a recorded line (convo-bridge events export).',
      ),
    event_file: z
      .string()
      .optional()
      .describe('A JSON file with the event (any of the three shapes), relative to this file.'),
    facts: FactsJsonSchema.optional().describe(
      'The conversation before the event (as for explain --facts). Default: none known, not the first message.',
    ),
    now: nowSchema.optional(),
    burst: z
      .array(
        z.strictObject({
          at: z.iso
            .datetime({
              offset: true,
              error: 'expected an ISO-8601 instant with a zone (e.g. 2026-11-23T03:15:00Z)',
            })
            .describe('When the bridge received the message.'),
          text: z.string().describe('The message text.'),
        }),
      )
      .min(1, { error: 'list at least one message' })
      .optional()
      .describe(
        'Customer messages of one burst (or several): each is the event with this text, received at this time. The case then checks what the debounced rules do when each burst ends (per-message rules are not run).',
      ),
    expect: ExpectSchema,
  })
  .refine((c) => (c.event === undefined) !== (c.event_file === undefined), {
    error: 'give exactly one of event (inline) or event_file',
  });
export type RuleTestCase = z.output<typeof RuleTestCaseSchema>;

export const RuleTestFileSchema = z.strictObject({
  config: z
    .string()
    .optional()
    .describe(
      'The config whose rules are tested, relative to this file (convo-bridge test --config overrides it).',
    ),
  business: z
    .string()
    .optional()
    .describe(
      'With a config of several businesses: whose rules are tested (convo-bridge test --business overrides it).',
    ),
  now: nowSchema.optional().describe('Default now of every case.'),
  cases: z.array(RuleTestCaseSchema).min(1, { error: 'list at least one case' }),
});
export type RuleTestFile = z.output<typeof RuleTestFileSchema>;

/** JSON Schema (draft-07) of test files, for editors. */
export function rulesTestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(RuleTestFileSchema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: 'https://convo-bridge.dev/schema/rules-test.json',
    title: 'convo-bridge rule tests',
    ...schema,
  };
}
