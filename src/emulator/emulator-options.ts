import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { isHttpUrl } from '../base/is-http-url.js';
import type { DeliveryMode } from './delivery-progress.js';
import { EmulatorError } from './emulator-error.js';
import type { InboxClocks } from './inbox-clocks.js';
import type { RateLimitConfig } from './platform-api.js';
import type { WebhookFailure, WebhookTarget } from './webhook-dispatcher.js';

const nonEmpty = z.string().trim().min(1);
const positiveInt = z.number().int().positive();

function webhookTarget(name: string) {
  return z.strictObject({
    url: z.string().refine(isHttpUrl, { error: `${name}.url must be an http(s) URL` }),
    secret: nonEmpty.optional(),
  });
}

/**
 * One business the emulator hosts: what the platform's dashboard settings hold for an account
 * (Business ID, Secret Key, name, webhook addresses, plan) and the conversations it starts with.
 */
export const BusinessOptionsSchema = z.strictObject({
  businessId: nonEmpty,
  secret: nonEmpty,
  /** Sender name of its API messages and `bisnis.name` in its webhooks (default: its id). */
  businessName: nonEmpty.optional(),
  webhook: webhookTarget('webhook').optional(),
  handoverWebhook: webhookTarget('handoverWebhook').optional(),
  apiFeature: z.boolean().default(true),
  seedData: z.unknown().optional(),
  seedFile: nonEmpty.optional(),
});
export type BusinessOptions = z.input<typeof BusinessOptionsSchema>;

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
  /**
   * The first business (the only one unless `businesses` adds more): its id and Secret Key, and
   * below its name, webhooks, plan and seed. Without them, `businesses[0]` is the first business.
   */
  businessId: nonEmpty.optional(),
  secret: nonEmpty.optional(),
  businessName: nonEmpty.optional(),
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
   * nothing. On, it tests that the bridge recognises its own sends.
   */
  echoApiSends: z.boolean().default(false),
  /**
   * Where webhooks go. `secret` is what the `Authorization` header carries; by default the Secret
   * Key, since "webhook calls to the customer's system carry the Secret Key" (interface,
   * "Authentication" rule 3). A separate value stands for a dashboard that sets its own.
   */
  webhook: webhookTarget('webhook').optional(),
  /**
   * The agent's separate hand-over address, called when the AI hands a conversation to a human
   * (interface, "Events"); `secret` defaults to the Secret Key as for `webhook`.
   */
  handoverWebhook: webhookTarget('handoverWebhook').optional(),
  /**
   * The business's plan includes the API feature (default true). `false`: every authenticated API
   * call is refused with rc 403 and the platform's text (webhook-payloads.md §3, "Paket user tidak
   * memiliki fitur API").
   */
  apiFeature: z.boolean().optional(),
  /**
   * More businesses on the same emulator, each with its own credentials,
   * webhooks, plan, seed and conversations. They come after the business of `businessId`.
   */
  businesses: z.array(BusinessOptionsSchema).optional(),
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
   * The bridge's clocks of a conversation for the inbox page: its
   * pending timers and its idea of the window's end. The emulator knows nothing of the bridge; the
   * caller supplies this (the CLI's --clocks-config reads the bridge's Redis). With several
   * businesses, it is told whose conversation (the business's Business ID).
   */
  clocks: z
    .custom<(conversationId: string, businessId: string) => Promise<InboxClocks | null>>(
      (value) => typeof value === 'function',
    )
    .optional(),
  /** Told about every failed webhook attempt (the CLI prints them). */
  onWebhookFailure: z
    .custom<(failure: WebhookFailure) => void>((value) => typeof value === 'function')
    .optional(),
});
export type EmulatorOptions = z.input<typeof EmulatorOptionsSchema>;

/** One business as everything inside uses it: defaults applied, webhook secrets resolved. */
export interface ResolvedBusiness {
  readonly id: string;
  readonly secret: string;
  readonly name: string;
  readonly webhook: WebhookTarget | undefined;
  readonly handoverWebhook: WebhookTarget | undefined;
  readonly apiFeature: boolean;
  readonly seedData: unknown;
  readonly seedFile: string | undefined;
  /** Where its options were given, put before their names in errors: '' (top level) or `businesses.<n>.`. */
  readonly where: string;
}

/** The fields of the schema that belong to one business; resolved into `businesses`. */
type BusinessFields =
  | 'businessId'
  | 'secret'
  | 'businessName'
  | 'webhook'
  | 'handoverWebhook'
  | 'apiFeature'
  | 'seedData'
  | 'seedFile'
  | 'businesses';

/**
 * The options as everything inside uses them: the schema's output with its defaults, and the few
 * fields resolved here (the businesses, the form's rate limit, the delivery mode, the seed, the
 * clock). A new option needs only its line in the schema.
 */
export type ResolvedEmulatorOptions = Readonly<
  Omit<z.output<typeof EmulatorOptionsSchema>, BusinessFields | 'rateLimit' | 'delivery' | 'seed' | 'now'> & {
    /** Every business, the first (the default of the admin API) first; never empty. */
    businesses: readonly ResolvedBusiness[];
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

/** The first business's name when none is given (one business: as it always was). */
const FIRST_BUSINESS_NAME = 'Toko Emulator';

function invalid(details: string, cause?: unknown): EmulatorError {
  return new EmulatorError('EMULATOR_OPTIONS_INVALID', `invalid emulator options: ${details}`, { cause });
}

function resolveTarget(
  target: { url: string; secret?: string | undefined } | undefined,
  secret: string,
): WebhookTarget | undefined {
  // Without a secret of its own, a webhook carries the business's Secret Key (interface,
  // "Authentication" rule 3).
  return target === undefined ? undefined : { url: target.url, secret: target.secret ?? secret };
}

type ParsedOptions = z.output<typeof EmulatorOptionsSchema>;

/** One business's options, wherever they were given, resolved; `where` is their place in the options. */
function resolveBusiness(
  b: Omit<z.output<typeof BusinessOptionsSchema>, 'apiFeature'> & { apiFeature?: boolean | undefined },
  where: string,
  name: string,
): ResolvedBusiness {
  return {
    id: b.businessId,
    secret: b.secret,
    name: b.businessName ?? name,
    webhook: resolveTarget(b.webhook, b.secret),
    handoverWebhook: resolveTarget(b.handoverWebhook, b.secret),
    apiFeature: b.apiFeature ?? true,
    seedData: b.seedData,
    seedFile: b.seedFile,
    where,
  };
}

/**
 * The business the top-level fields give, as a table of none or one: the options' shorthand for a
 * first business, resolved here once so that everything after sees only the table. Refuses a
 * half-given one, and the business's fields without its id.
 */
function topLevelBusiness(o: ParsedOptions): ResolvedBusiness[] {
  const { businessId, secret } = o;
  if (businessId !== undefined && secret !== undefined) {
    return [resolveBusiness({ ...o, businessId, secret }, '', FIRST_BUSINESS_NAME)];
  }
  if (businessId !== undefined || secret !== undefined) {
    throw invalid(
      `give businessId and secret together (got only ${secret === undefined ? 'businessId' : 'secret'})`,
    );
  }
  const stray = (
    ['businessName', 'webhook', 'handoverWebhook', 'apiFeature', 'seedData', 'seedFile'] as const
  ).filter((key) => o[key] !== undefined);
  if (stray.length > 0) {
    throw invalid(
      `${stray.join(', ')} belong${stray.length === 1 ? 's' : ''} to the business of businessId, which is not given: add businessId and secret, or move ${stray.length === 1 ? 'it' : 'them'} into a businesses entry`,
    );
  }
  return [];
}

/** How errors name a business: `businessId` for the top-level one, else its `businesses` entry. */
function placeOf(business: ResolvedBusiness): string {
  return business.where === '' ? 'businessId' : business.where.slice(0, -1);
}

/**
 * The businesses in order: the one of the top-level `businessId` first (when given), then
 * `businesses`. Refuses no business at all, and two businesses with the same id or the same Secret
 * Key (the earlier form's plain bearer names a business by its Secret Key alone, so keys must differ).
 */
function resolveBusinesses(o: ParsedOptions): ResolvedBusiness[] {
  const out = topLevelBusiness(o);
  (o.businesses ?? []).forEach((b, index) => {
    out.push(
      resolveBusiness(b, `businesses.${index}.`, out.length === 0 ? FIRST_BUSINESS_NAME : b.businessId),
    );
  });
  if (out.length === 0) {
    throw invalid('no business: give businessId and secret, or a businesses list with at least one entry');
  }
  const ids = new Map<string, ResolvedBusiness>();
  const secrets = new Map<string, ResolvedBusiness>();
  for (const business of out) {
    const sameId = ids.get(business.id);
    if (sameId !== undefined) {
      throw invalid(
        `${placeOf(business)}: business id ${JSON.stringify(business.id)} is already used by ${placeOf(sameId)}: each business needs its own id`,
      );
    }
    const sameSecret = secrets.get(business.secret);
    if (sameSecret !== undefined) {
      throw invalid(
        `${placeOf(business)}: its secret is also the secret of ${placeOf(sameSecret)}: give each business its own Secret Key (the earlier form's plain bearer names a business by its key alone)`,
      );
    }
    ids.set(business.id, business);
    secrets.set(business.secret, business);
  }
  return out;
}

export function resolveEmulatorOptions(input: unknown): ResolvedEmulatorOptions {
  const parsed = EmulatorOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const details = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'options'}: ${issue.message}`)
      .join('; ');
    throw invalid(details, parsed.error);
  }
  const {
    businessId: _id,
    secret: _secret,
    businessName: _name,
    webhook: _webhook,
    handoverWebhook: _handover,
    apiFeature: _apiFeature,
    seedData: _seedData,
    seedFile: _seedFile,
    businesses: _businesses,
    ...o
  } = parsed.data;
  const businesses = resolveBusinesses(parsed.data);
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
    businesses,
    rateLimit,
    delivery,
    seed: o.seed ?? randomInt(0, 0xffff_ffff),
    now: o.now ?? Date.now,
  };
}
