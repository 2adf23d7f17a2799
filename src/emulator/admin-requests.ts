import { z } from 'zod';
import { CHANNEL_TYPES } from './channels.js';
import { CONVERSATION_MODES, CONVERSATION_STATUSES } from './conversation-status.js';
import { EmulatorError } from './emulator-error.js';
import { DELIVERY_STATUSES, MEDIA_TYPES } from './emulator-state.js';

/**
 * Bodies of the admin API (/_emulator/). JSON bodies and the inbox page's HTML forms (all strings)
 * are both accepted, so booleans and numbers also take their string spellings.
 */
const flag = z.union([
  z.boolean(),
  z.enum(['true', 'false', 'on', 'off', '1', '0']).transform((v) => ['true', 'on', '1'].includes(v)),
]);
const optionalText = z.string().trim().min(1).optional();
/** Form fields left empty arrive as ''; treat them as absent. */
const blankAsUndefined = (value: unknown) => (value === '' ? undefined : value);

export const CreateConversationBody = z.strictObject({
  id: z.preprocess(blankAsUndefined, optionalText),
  label: z.preprocess(blankAsUndefined, optionalText),
  channel: z
    .union([
      z.enum(CHANNEL_TYPES).transform((type) => ({ type, id: undefined, name: undefined })),
      z.strictObject({ type: z.enum(CHANNEL_TYPES).optional(), id: optionalText, name: optionalText }),
    ])
    .optional(),
  status: z.enum(CONVERSATION_STATUSES).optional(),
  mode: z.enum(CONVERSATION_MODES).optional(),
  needHuman: flag.optional(),
  aiMarksHandled: flag.optional(),
});

export const CustomerMessageBody = z.strictObject({
  text: z.string().optional(),
  media: z
    .strictObject({
      type: z.enum(MEDIA_TYPES),
      url: z.url({ protocol: /^https?$/ }),
      mimeType: optionalText,
      caption: z.string().optional(),
    })
    .optional(),
  at: z.preprocess(blankAsUndefined, z.union([z.string(), z.number()]).optional()),
  senderName: z.preprocess(blankAsUndefined, optionalText),
});

export const ReplyBody = z.strictObject({
  text: z.string().refine((text) => text.trim() !== '', { error: 'text must not be empty' }),
  agentName: z.preprocess(blankAsUndefined, optionalText),
});

export const TakeOverBody = z.strictObject({ agentName: z.preprocess(blankAsUndefined, optionalText) });
export const EmptyBody = z.strictObject({});
export const DeliveryStatusBody = z.strictObject({ status: z.enum(DELIVERY_STATUSES) });
export const WebhookBody = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  /** Default: the Secret Key (interface, "Authentication" rule 3). */
  secret: z.string().min(1).optional(),
});
export const PlanBody = z.strictObject({ apiFeature: flag });
export const AuthStormBody = z.strictObject({ active: flag });
export const ReseedBody = z.strictObject({ seed: z.coerce.number().int().min(0).max(0xffff_ffff) });
export const ResetBody = z.strictObject({ empty: flag.optional() });

/** Validates an admin body; the error names the field and the endpoint. */
export function parseAdminBody<T>(schema: z.ZodType<T>, body: unknown, where: string): T {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
  throw new EmulatorError('EMULATOR_BAD_REQUEST', `invalid body for ${where}: ${details}`, {
    cause: parsed.error,
  });
}
