import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { describeError } from '../base/errors.js';
import { CHANNEL_TYPES } from './channels.js';
import { CONVERSATION_MODES, CONVERSATION_STATUSES, type ConversationStatus } from './conversation-status.js';
import { EmulatorError } from './emulator-error.js';
import { DELIVERY_STATUSES, type EmulatorState, MEDIA_TYPES, type MessageContent } from './emulator-state.js';
import { MOMENT_HINT, parseMoment } from './parse-moment.js';

/**
 * Seed files (`--seed FILE`): conversations and messages the emulator starts with, as JSON or YAML.
 *
 *   conversations:
 *     - id: conv-1
 *       label: Budi
 *       channel: whatsapp_api            # or {type, id, name}
 *       messages:
 *         - {from: customer, text: "Halo", ago: 25h}
 *         - {from: note, text: "VIP"}
 *       status: Butuh CS                 # optional; derived from the messages otherwise
 *
 * Validated with zod; unknown keys are errors (they are usually typos). Seeding emits no webhooks.
 */
const moment = z.union([z.string(), z.number()]);

const SeedMessageSchema = z
  .strictObject({
    from: z.enum(['customer', 'ai', 'agent', 'api', 'note']),
    text: z.string().optional(),
    media: z
      .strictObject({
        type: z.enum(MEDIA_TYPES),
        url: z.url({ protocol: /^https?$/ }),
        mime_type: z.string().min(1).optional(),
        caption: z.string().optional(),
      })
      .optional(),
    /** When it was sent: ISO with zone, WIB wall clock, or epoch ms. */
    at: moment.optional(),
    /** How long ago it was sent: `25h`, `90m`, `2d`. */
    ago: z.string().optional(),
    sender_name: z.string().min(1).optional(),
    delivery_status: z.enum(DELIVERY_STATUSES).optional(),
  })
  .superRefine((message, ctx) => {
    if ((message.text === undefined) === (message.media === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of text or media' });
    }
    if (message.at !== undefined && message.ago !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'give at most one of at or ago' });
    }
    if (message.media !== undefined && message.from === 'note') {
      ctx.addIssue({ code: 'custom', path: ['media'], message: 'a note is text only' });
    }
    for (const key of ['at', 'ago'] as const) {
      const value = message[key];
      if (value !== undefined && parseMoment(value, 0) === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `cannot read ${JSON.stringify(value)} as a time: ${MOMENT_HINT}`,
        });
      }
    }
  });

const SeedConversationSchema = z.strictObject({
  id: z.string().trim().min(1),
  label: z.string().min(1).optional(),
  /** A channel type, or {type, id, name}. */
  channel: z
    .preprocess(
      (value) => (typeof value === 'string' ? { type: value } : value),
      z.strictObject({
        type: z.enum(CHANNEL_TYPES),
        id: z.string().min(1).optional(),
        name: z.string().min(1).optional(),
      }),
    )
    .optional(),
  status: z.enum(CONVERSATION_STATUSES).optional(),
  mode: z.enum(CONVERSATION_MODES).optional(),
  need_human: z.boolean().optional(),
  ai_marks_handled: z.boolean().optional(),
  messages: z.array(SeedMessageSchema).default([]),
});

export const SeedDataSchema = z
  .strictObject({ conversations: z.array(SeedConversationSchema) })
  .superRefine((seed, ctx) => {
    const seen = new Set<string>();
    seed.conversations.forEach((conversation, index) => {
      if (seen.has(conversation.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['conversations', index, 'id'],
          message: `duplicate conversation id ${JSON.stringify(conversation.id)}`,
        });
      }
      seen.add(conversation.id);
    });
  });
export type SeedData = z.infer<typeof SeedDataSchema>;

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    out += typeof part === 'number' ? `[${part}]` : `${out === '' ? '' : '.'}${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}

/** Validates parsed seed data; `source` names it in errors (a file path, or "seedData"). */
export function parseSeedData(value: unknown, source: string): SeedData {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EmulatorError(
      'EMULATOR_SEED_INVALID',
      `${source}: expected an object with a "conversations" list, got ${Array.isArray(value) ? 'a list' : value === null || value === undefined ? 'nothing' : typeof value}`,
    );
  }
  const parsed = SeedDataSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
    .join('; ');
  const more = parsed.error.issues.length > 5 ? ` (and ${parsed.error.issues.length - 5} more)` : '';
  throw new EmulatorError('EMULATOR_SEED_INVALID', `${source}: ${details}${more}`, { cause: parsed.error });
}

/** Reads and validates a JSON or YAML seed file. */
export async function loadSeedFile(path: string): Promise<SeedData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new EmulatorError(
      'EMULATOR_SEED_INVALID',
      `cannot read seed file ${path}: ${describeError(error)} (check the --seed path)`,
      { cause: error },
    );
  }
  // YAML 1.2 is a superset of JSON, so one parser reads both. Warnings (unknown tags such as
  // !!js/function) count as errors: a seed file should mean exactly what it says.
  const document = parseDocument(text, { prettyErrors: true });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) {
    throw new EmulatorError(
      'EMULATOR_SEED_INVALID',
      `seed file ${path} is not valid JSON or YAML: ${problem.message.split('\n')[0]}`,
      { cause: problem },
    );
  }
  let value: unknown;
  try {
    // Alias expansion is bounded (a "billion laughs" file fails here instead of eating memory).
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new EmulatorError(
      'EMULATOR_SEED_INVALID',
      `seed file ${path} cannot be read: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  return parseSeedData(value, `seed file ${path}`);
}

/** Lays the seed down in the state: no webhooks, no delivery progress. */
export function applySeedData(state: EmulatorState, seed: SeedData, nowMs: number): void {
  for (const input of seed.conversations) {
    const channel = typeof input.channel === 'string' ? { type: input.channel } : input.channel;
    state.createConversation({
      id: input.id,
      label: input.label,
      channel,
      aiMarksHandled: input.ai_marks_handled,
    });
    let lastOrigin: string | undefined;
    for (const message of input.messages) {
      const when = message.at ?? message.ago;
      const atMs = when === undefined ? nowMs : (parseMoment(when, nowMs) ?? nowMs);
      const content: MessageContent = message.media
        ? {
            kind: 'media',
            type: message.media.type,
            url: message.media.url,
            mimeType:
              message.media.mime_type ??
              (message.media.type === 'image' ? 'image/jpeg' : 'application/octet-stream'),
            caption: message.media.caption ?? '',
          }
        : { kind: 'text', text: message.text ?? '' };
      state.importMessage(input.id, {
        origin: message.from,
        content,
        atMs,
        senderName: message.sender_name,
        deliveryStatus: message.delivery_status,
      });
      if (message.from !== 'note') lastOrigin = message.from;
    }
    const needHuman = input.need_human ?? input.status === 'Butuh CS';
    const derived: ConversationStatus = needHuman
      ? 'Butuh CS'
      : lastOrigin === 'customer'
        ? 'Belum Dibaca'
        : lastOrigin === undefined
          ? 'Belum Ditangani'
          : 'Ditangani';
    state.setFlags(input.id, {
      status: input.status ?? derived,
      mode: needHuman ? 'human' : (input.mode ?? 'ai'),
      needHuman,
    });
  }
}
