import { z } from 'zod';
import { isIsoDate, isValidTimeZone, parseDayKey, parseOpeningRange, WEEKDAYS } from './business-hours.js';
import { engineValueSchema, type ruleSchema, simpleActionSchema } from './rule-schema.js';

/**
 * The parts of the config the rules read beside the rules themselves: the time zone, business
 * hours, the channel table and the reply window. They are the rules' own settings, so their
 * schemas live here and config/config-schema.ts composes them into the whole file's schema.
 */

const nonEmpty = z.string().trim().min(1, { error: 'must not be empty' });

export const CHANNEL_KINDS = [
  'whatsapp_api',
  'whatsapp_qr',
  'instagram',
  'messenger',
  'telegram',
  'slack',
  'intercom',
  'webchat',
  'socialchat',
  'other',
] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** Channels with a 24-hour free-form window (webhook-payloads.md §4). */
export const DEFAULT_WINDOW_KINDS: ChannelKind[] = ['whatsapp_api', 'instagram', 'messenger'];

export const timezoneSchema = z
  .string()
  .refine(isValidTimeZone, { error: 'unknown time zone: use an IANA name such as Asia/Jakarta' })
  .default('Asia/Jakarta');

const weeklySchema = z
  .record(
    z.string(),
    z.union([z.string(), z.array(z.string()).min(1, { error: 'must not be an empty list' })]),
  )
  .superRefine((weekly, ctx) => {
    const seen = new Map<number, string>();
    for (const [key, value] of Object.entries(weekly)) {
      const days = parseDayKey(key);
      if (!days) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `"${key}" is not a day: use ${WEEKDAYS.slice(1).join(', ')}, sun or a range such as mon-fri`,
        });
        continue;
      }
      for (const day of days) {
        const earlier = seen.get(day);
        if (earlier !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `${WEEKDAYS[day]} is given twice (in "${earlier}" and "${key}"): list each day once`,
          });
          break;
        }
        seen.set(day, key);
      }
      const ranges = typeof value === 'string' ? [value] : value;
      ranges.forEach((range, index) => {
        const parsed = parseOpeningRange(range);
        if (typeof parsed === 'string') {
          ctx.addIssue({
            code: 'custom',
            path: typeof value === 'string' ? [key] : [key, index],
            message: parsed,
          });
        }
      });
    }
  })
  .describe('Opening hours per day: keys mon..sun or ranges like mon-fri; values "HH:MM-HH:MM" or a list.');

export const businessHoursSchema = z.strictObject({
  weekly: weeklySchema,
  holidays: z
    .array(z.string().refine(isIsoDate, { error: 'expected a date as YYYY-MM-DD' }))
    .default([])
    .describe('Dates (YYYY-MM-DD) closed all day.'),
});

export const channelSchema = z.strictObject({
  match: z
    .strictObject({
      engine: engineValueSchema.optional(),
      channel_id: nonEmpty.optional(),
      channel_name: nonEmpty.optional(),
    })
    .refine((m) => m.engine !== undefined || m.channel_id !== undefined || m.channel_name !== undefined, {
      error: 'match needs engine, channel_id or channel_name',
    })
    .transform((m) => ({ engine: m.engine, channelId: m.channel_id, channelName: m.channel_name })),
  kind: z.enum(CHANNEL_KINDS),
});

export const replyWindowSchema = z
  .strictObject({
    applies_to: z
      .array(z.enum(CHANNEL_KINDS))
      .default(DEFAULT_WINDOW_KINDS)
      .describe('Channel kinds (from channels:) whose free-form replies need an open window.'),
    // Fractions (hours: 0.05 = 3 minutes) let tests and demos watch a window close.
    hours: z
      .union([
        z.number(),
        z
          .string()
          .regex(/^\d+(\.\d+)?$/, { error: 'expected a number of hours' })
          .transform(Number),
      ])
      .pipe(
        z
          .number()
          .min(0.01, { error: 'must be at least 0.01 (36 seconds)' })
          .max(24 * 30, { error: 'must be at most 720 (30 days)' }),
      )
      .prefault(24),
    when_closed: z
      .array(simpleActionSchema)
      .default([])
      .describe('Actions planned instead of a reply when the window is closed.'),
  })
  .transform((w) => ({ appliesTo: w.applies_to, hours: w.hours, whenClosed: w.when_closed }));

export type ChannelConfig = z.output<typeof channelSchema>;
export type ReplyWindowConfig = z.output<typeof replyWindowSchema>;
export type BusinessHoursConfig = z.output<typeof businessHoursSchema>;
export type RuleConfig = z.output<typeof ruleSchema>;

/**
 * What compileRules reads of a config: the rules and their own settings (a whole BridgeConfig
 * is one; so will be one business's settings when several are served).
 */
export interface RulesSettings {
  readonly rules: readonly RuleConfig[];
  /** Only the names are read, to check `forward: NAME`. */
  readonly destinations: Readonly<Record<string, unknown>>;
  readonly timezone: string;
  readonly businessHours: BusinessHoursConfig | null;
  readonly channels: readonly ChannelConfig[];
  readonly replyWindow: ReplyWindowConfig;
}
