import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { DeliveryMode } from './delivery-progress.js';
import { EmulatorError } from './emulator-error.js';
import type { InboxClocks } from './inbox-clocks.js';
import type { RateLimitConfig } from './platform-api.js';
import type { WebhookFailure, WebhookTarget } from './webhook-dispatcher.js';

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const nonEmpty = z.string().trim().min(1);
const positiveInt = z.number().int().positive();

/**
 * Options of `startEmulator` (and, through the CLI, of `convo-bridge emulator`). Validated once here;
 * everything inside uses the resolved shape.
 */
export const EmulatorOptionsSchema = z.strictObject({
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: z.number().int().min(0).max(65_535).default(0),
  /** Interface to listen on. Loopback by default; the emulator is a test tool. */
  host: nonEmpty.default('127.0.0.1'),
  form: z.enum(['current', 'earlier']).default('current'),
  businessId: nonEmpty,
  secret: nonEmpty,
  businessName: nonEmpty.default('Toko Emulator'),
  /** The account owner, `message.user` in webhooks. */
  owner: z.strictObject({ id: nonEmpty, name: nonEmpty }).default({ id: 'user-1', name: 'Pemilik Toko' }),
  /** The AI agent: replies are signed `<name> - <label>`; webhooks carry `{name, id}`. */
  ai: z
    .strictObject({ id: nonEmpty, name: nonEmpty, label: nonEmpty })
    .default({ id: 'ai-1', name: 'Asisten', label: 'AI' }),
  defaultAgentName: nonEmpty.default('Agen CS'),
  /** The AI agent's 'mark as handled' setting: an AI reply leaves Ditangani (true) or Belum Ditangani. */
  aiMarksHandled: z.boolean().default(true),
  /**
   * Report messages sent through the API as agent replies (`agent.message_out`; earlier form
   * `message.sent`), as some platforms do. Off by default: the interface says API sends emit
   * nothing. On, it tests that the bridge recognises its own sends (issue 16).
   */
  echoApiSends: z.boolean().default(false),
  /**
   * Where webhooks go. `secret` is what the `Authorization` header carries; by default the Secret
   * Key, since "webhook calls to the customer's system carry the Secret Key" (interface,
   * "Authentication" rule 3). A separate value stands for a dashboard that sets its own.
   */
  webhook: z
    .strictObject({
      url: z.string().refine(isHttpUrl, { error: 'webhook.url must be an http(s) URL' }),
      secret: nonEmpty.optional(),
    })
    .optional(),
  /**
   * The agent's separate hand-over address, called when the AI hands a conversation to a human
   * (interface, "Events"); `secret` defaults to the Secret Key as for `webhook`.
   */
  handoverWebhook: z
    .strictObject({
      url: z.string().refine(isHttpUrl, { error: 'handoverWebhook.url must be an http(s) URL' }),
      secret: nonEmpty.optional(),
    })
    .optional(),
  /**
   * The business's plan includes the API feature. `false`: every authenticated API call is refused
   * with rc 403 and the platform's text (webhook-payloads.md §3, "Paket user tidak memiliki fitur API").
   */
  apiFeature: z.boolean().default(true),
  /** Delays before webhook attempts 2, 3 and 4 (the spec does not show them). */
  webhookRetryDelaysMs: z.array(z.number().int().min(0).max(600_000)).length(3).default([1000, 5000, 25_000]),
  webhookTimeoutMs: positiveInt.max(600_000).default(5000),
  /** `false` turns limits off; default: on in the earlier form (100 / 10 per minute), off in the current form. */
  rateLimit: z
    .union([
      z.literal(false),
      z.strictObject({
        authenticated: z.number().int().min(0),
        unauthenticated: z.number().int().min(0),
        windowMs: positiveInt,
      }),
    ])
    .optional(),
  delivery: z
    .union([
      z.literal('immediate'),
      z.literal('manual'),
      z.strictObject({ stepMs: positiveInt.max(600_000) }),
    ])
    .default('immediate'),
  /** Where delivery stops: `delivered`, or on to `read`. */
  finalDeliveryStatus: z.enum(['delivered', 'read']).default('delivered'),
  /** Link rules of POST /v1/message; without it every link is reachable and none is an image. */
  links: z
    .strictObject({ reachable: z.array(z.string()).default([]), images: z.array(z.string()).default([]) })
    .optional(),
  /** Seed of the fault-injection RNG (random when omitted; read it back from the admin state). */
  seed: z.number().int().min(0).max(0xffff_ffff).optional(),
  /** Conversations and messages to start with, already parsed (see seed-data.ts), or a file to read. */
  seedData: z.unknown().optional(),
  seedFile: nonEmpty.optional(),
  requestLogSize: positiveInt.max(1_000_000).default(10_000),
  deliveryLogSize: positiveInt.max(1_000_000).default(10_000),
  /** Body of GET /version. */
  version: nonEmpty.default('1.3'),
  /** Clock (epoch ms) for message times, windows and rate limits; tests may pass their own. */
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
  /**
   * The bridge's clocks of a conversation for the inbox page (issue 16, "visible clocks"): its
   * pending timers and its idea of the window's end. The emulator knows nothing of the bridge; the
   * caller supplies this (the CLI's --clocks-config reads the bridge's Redis).
   */
  clocks: z
    .custom<(conversationId: string) => Promise<InboxClocks | null>>((value) => typeof value === 'function')
    .optional(),
  /** Told about every failed webhook attempt (the CLI prints them; issue 13, item 9). */
  onWebhookFailure: z
    .custom<(failure: WebhookFailure) => void>((value) => typeof value === 'function')
    .optional(),
});
export type EmulatorOptions = z.input<typeof EmulatorOptionsSchema>;

/**
 * The options as everything inside uses them: the schema's output with its defaults, and the few
 * fields resolved here (webhook secrets, the form's rate limit, the delivery mode, the seed, the
 * clock). A new option needs only its line in the schema.
 */
export type ResolvedEmulatorOptions = Readonly<
  Omit<
    z.output<typeof EmulatorOptionsSchema>,
    'webhook' | 'handoverWebhook' | 'rateLimit' | 'delivery' | 'seed' | 'now'
  > & {
    webhook: WebhookTarget | undefined;
    handoverWebhook: WebhookTarget | undefined;
    rateLimit: RateLimitConfig | undefined;
    delivery: DeliveryMode;
    seed: number;
    now: () => number;
  }
>;

/** The earlier form's limits (spec, "Limits"). */
export const EARLIER_FORM_RATE_LIMIT: RateLimitConfig = {
  authenticated: 100,
  unauthenticated: 10,
  windowMs: 60_000,
};

export function resolveEmulatorOptions(input: unknown): ResolvedEmulatorOptions {
  const parsed = EmulatorOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const details = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'options'}: ${issue.message}`)
      .join('; ');
    throw new EmulatorError('EMULATOR_OPTIONS_INVALID', `invalid emulator options: ${details}`, {
      cause: parsed.error,
    });
  }
  const o = parsed.data;
  const rateLimit =
    o.rateLimit === false
      ? undefined
      : (o.rateLimit ?? (o.form === 'earlier' ? EARLIER_FORM_RATE_LIMIT : undefined));
  const delivery: DeliveryMode =
    o.delivery === 'immediate' || o.delivery === 'manual'
      ? { kind: o.delivery }
      : { kind: 'tick', stepMs: o.delivery.stepMs };
  return {
    ...o,
    webhook:
      o.webhook === undefined ? undefined : { url: o.webhook.url, secret: o.webhook.secret ?? o.secret },
    handoverWebhook:
      o.handoverWebhook === undefined
        ? undefined
        : { url: o.handoverWebhook.url, secret: o.handoverWebhook.secret ?? o.secret },
    rateLimit,
    delivery,
    seed: o.seed ?? randomInt(0, 0xffff_ffff),
    now: o.now ?? Date.now,
  };
}
