import { z } from 'zod';
import { closestNameHint } from '../base/closest-name.js';
import { parseSize, SIZE_HINT, SIZE_REGEX_SOURCE } from '../base/duration.js';
import { ConversationEventSchema } from '../events/conversation-event.js';
import { durationSchema, ruleSchema } from '../rules/rule-schema.js';
import {
  businessHoursSchema,
  channelSchema,
  replyWindowSchema,
  timezoneSchema,
} from '../rules/rules-settings-schema.js';
import { redisEndpointProblems, redisEndpointSchema, redisTopologyOf } from './redis-endpoints.js';
import { checkRedisUrl } from './redis-url.js';

/**
 * The config file's schema. Input is the YAML as written (snake_case); output is the typed
 * `BridgeConfig` (camelCase, durations in ms, sizes in bytes, defaults filled in).
 * Descriptions here end up in config/schema.json, which editors use for completion.
 */

const nonEmpty = z.string().trim().min(1, { error: 'must not be empty' });

/** Integers may come from `${VAR}` substitution as strings ("8080"). */
function integer(min: number, max: number) {
  return z
    .union(
      [z.number().int(), z.string().regex(/^\d+$/, { error: 'expected a whole number' }).transform(Number)],
      {
        error: 'expected a whole number',
      },
    )
    .pipe(z.number().int().min(min).max(max));
}

function httpUrl(example: string, protocols: readonly string[] = ['http:', 'https:']) {
  return z.string().superRefine((text, ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    const wanted = protocols.map((p) => `${p}//`).join(' or ');
    if (!url || !protocols.includes(url.protocol)) {
      const article = wanted.startsWith('h') ? 'an' : 'a';
      ctx.addIssue({ code: 'custom', message: `must be ${article} ${wanted} URL, e.g. ${example}` });
    }
  });
}

const sizeSchema = z
  .string()
  .regex(new RegExp(SIZE_REGEX_SOURCE, 'i'), { error: `expected ${SIZE_HINT}` })
  .transform((text) => parseSize(text) ?? 0)
  .meta({ description: SIZE_HINT });

/**
 * The credential scheme of each form when the config does not name one: the current
 * form's separate headers, the earlier form's plain bearer (interface, "Authentication": the plain
 * bearer is the earlier form's only scheme).
 */
export function defaultAuthScheme(form: 'current' | 'earlier'): 'headers' | 'bearer-secret' {
  return form === 'earlier' ? 'bearer-secret' : 'headers';
}

const platformSchema = z
  .strictObject({
    base_url: httpUrl('https://api.example.com').describe(
      'Base address of the platform API, e.g. https://api.example.com',
    ),
    form: z
      .enum(['current', 'earlier'])
      .default('current')
      .describe('Which form of the interface the platform speaks.'),
    auth: z
      .strictObject({
        scheme: z
          .enum(['headers', 'bearer', 'bearer-secret'])
          .optional()
          .describe(
            'headers: Business + Secret; bearer: base64(business_id:secret); bearer-secret: the secret alone. Default: headers in the current form, bearer-secret in the earlier.',
          ),
        business_id: nonEmpty.optional(),
        secret: nonEmpty,
      })
      // A scheme written out is checked here, so that the problem is reported even when other
      // platform fields are wrong; a defaulted one depends on the form (checked below).
      .superRefine((auth, ctx) => {
        if (auth.scheme !== undefined && auth.scheme !== 'bearer-secret' && auth.business_id === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['business_id'],
            message: `business_id is required for scheme ${auth.scheme} (it is in the dashboard's API settings)`,
          });
        }
      }),
    timeout: durationSchema.prefault('10s').describe('Timeout of one platform request.'),
    retry: z
      .strictObject({
        retries: integer(0, 10).prefault(3),
        min_delay: durationSchema.prefault('100ms'),
        max_delay: durationSchema.prefault('2s'),
        max_retry_after: durationSchema.prefault('5s'),
      })
      .prefault({})
      .transform((r) => ({
        retries: r.retries,
        minDelayMs: r.min_delay,
        maxDelayMs: r.max_delay,
        maxRetryAfterMs: r.max_retry_after,
      })),
    rate_limit: z
      .strictObject({ max: integer(1, 1_000_000), per: durationSchema })
      .optional()
      .describe(
        'Requests allowed per period. Default: 100 per 1m for the earlier form, none for the current.',
      ),
  })
  .superRefine((p, ctx) => {
    const scheme = defaultAuthScheme(p.form);
    if (p.auth.scheme === undefined && scheme !== 'bearer-secret' && p.auth.business_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'business_id'],
        message: `business_id is required for scheme ${scheme}, the ${p.form} form's default (it is in the dashboard's API settings)`,
      });
    }
  })
  .transform((p) => ({
    baseUrl: p.base_url,
    form: p.form,
    auth: {
      scheme: p.auth.scheme ?? defaultAuthScheme(p.form),
      /** The Business ID; the `bearer-secret` scheme needs none. */
      businessId: p.auth.business_id,
      secret: p.auth.secret,
      /** True when `scheme` was not written and the form's default was taken (validate says so). */
      schemeDefaulted: p.auth.scheme === undefined,
    },
    timeoutMs: p.timeout,
    retry: p.retry,
    rateLimit:
      p.rate_limit !== undefined
        ? { max: p.rate_limit.max, perMs: p.rate_limit.per }
        : p.form === 'earlier'
          ? { max: 100, perMs: 60_000 }
          : null,
  }));

/** The `receiver:` section; its defaults are the receiver's too (receive/receiver-defaults.ts). */
export const receiverSchema = z
  .strictObject({
    host: nonEmpty.default('0.0.0.0'),
    port: integer(0, 65_535).prefault(8080),
    path: z.string().startsWith('/', { error: 'must start with /' }).default('/webhooks/platform'),
    secrets: z
      .array(z.string().min(1, { error: 'a webhook secret must not be empty' }))
      .min(1, { error: 'list at least one webhook secret' })
      .optional()
      .describe(
        'Webhook secrets accepted (several while rotating). Default: the platform Secret Key, which the platform puts in the Authorization header of its webhook calls.',
      ),
    body_limit: sizeSchema.prefault('1mb'),
    dedupe_window: durationSchema
      .optional()
      .describe('Old name of retention.dedupe (still read; validate warns). Not both.'),
    enqueue_timeout: durationSchema.prefault('2s'),
  })
  .transform((r) => ({
    host: r.host,
    port: r.port,
    path: r.path,
    secrets: r.secrets,
    bodyLimitBytes: r.body_limit,
    /** Written under its old name (the schema moves it to retention.dedupe; null when not written). */
    oldDedupeWindowMs: r.dedupe_window ?? null,
    enqueueTimeoutMs: r.enqueue_timeout,
  }));

/** `redis.url`: its scheme, host, port and database part (config/redis-url.ts). */
const redisUrlSchema = z.string().superRefine((text, ctx) => {
  const checked = checkRedisUrl(text);
  if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
});

/** `{host, port}`, the written-out form of a Sentinel or Cluster node's address. */
const endpointObject = z.strictObject({ host: nonEmpty, port: integer(1, 65_535) });

/** The `redis:` section; its defaults are the receiver's too (receive/receiver-defaults.ts). */
export const redisSchema = z
  .strictObject({
    url: redisUrlSchema
      .optional()
      .describe(
        'One Redis (default redis://127.0.0.1:6379): redis://[user:password@]host:port[/db], rediss:// for TLS; /db is the database (default 0). Not with sentinels or cluster.',
      ),
    sentinels: z
      .array(redisEndpointSchema('sentinel', endpointObject))
      .min(1, { error: 'list at least one sentinel (host:port); three or more in production' })
      .optional()
      .describe(
        "Sentinels to ask for the primary named by `name` (ioredis Sentinel support). A URL's user and password are the sentinels' own (as sentinel_username/sentinel_password); rediss:// turns TLS on.",
      ),
    name: nonEmpty.optional().describe("With sentinels: the monitored primary's name."),
    cluster: z
      .strictObject({
        nodes: z
          .array(redisEndpointSchema('cluster node', endpointObject))
          .min(1, { error: 'list at least one cluster node (host:port)' })
          .describe(
            "Start-up nodes; the rest of the cluster is discovered from them. A URL's user and password apply to every node (as username/password); rediss:// turns TLS on.",
          ),
      })
      .optional()
      .describe('A Redis Cluster (keys are hash-tagged per queue shard).'),
    username: nonEmpty.optional().describe("With sentinels or cluster: the data nodes' ACL user."),
    password: nonEmpty
      .optional()
      .describe("With sentinels or cluster: the data nodes' password (with url, put it in the URL)."),
    sentinel_username: nonEmpty.optional(),
    sentinel_password: nonEmpty.optional().describe("The sentinels' own password, when they have one."),
    tls: z
      .boolean()
      .optional()
      .describe(
        'With sentinels or cluster: TLS to every node. Default: false, or true when the addresses are rediss:// URLs (with url: write rediss://).',
      ),
    db: integer(0, 999_999_999)
      .default(0)
      .describe(
        "With sentinels: the database number (a cluster has only 0); it must be below the server's `databases` setting (16 by default).",
      ),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'use 1-64 letters, digits and _ . -' })
      .default('cb'),
    shards: integer(1, 128)
      .prefault(1)
      .describe(
        'Queue shards: conversations are spread over them by a hash of their id, each under its own hash tag so a cluster spreads them over its primaries. Change it only with `convo-bridge reshard`.',
      ),
    replicas_ack: z
      .union([integer(0, 16), z.literal('auto')])
      .default('auto')
      .describe(
        'Replicas that must have each event before the webhook is acknowledged (Redis WAIT). auto: 1 with sentinels or cluster, 0 with one Redis.',
      ),
    replicas_ack_timeout: durationSchema.prefault('500ms'),
  })
  .superRefine((r, ctx) => {
    for (const problem of redisEndpointProblems(r)) ctx.addIssue({ code: 'custom', ...problem });
    const given = [r.url && 'url', r.sentinels && 'sentinels', r.cluster && 'cluster'].filter(Boolean);
    if (given.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `give one of url, sentinels (with name) or cluster, not ${given.join(' and ')}`,
      });
    }
    if (r.sentinels && r.name === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message:
          'sentinels need the primary\'s name: the <master-name> of `sentinel monitor` (often "mymaster")',
      });
    }
    if (r.name !== undefined && !r.sentinels) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'name is only used with sentinels' });
    }
    if (r.url !== undefined || given.length === 0) {
      for (const key of ['username', 'password', 'sentinel_username', 'sentinel_password'] as const) {
        if (r[key] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} is for sentinels or cluster; with url put the credentials in the URL (redis://user:password@host:6379)`,
          });
        }
      }
    }
    if ((r.url !== undefined || given.length === 0) && r.tls) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message: 'tls is for sentinels or cluster; with url, write rediss:// for TLS',
      });
    }
    if ((r.url !== undefined || given.length === 0) && r.db !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['db'],
        message: 'db is for sentinels; with url, put the database in the URL (redis://host:6379/2)',
      });
    }
    if (r.cluster && r.db !== 0) {
      ctx.addIssue({ code: 'custom', path: ['db'], message: 'a Redis Cluster has only database 0' });
    }
  })
  .transform((r) => {
    const topology = redisTopologyOf(r);
    return {
      topology,
      prefix: r.prefix,
      shards: r.shards,
      /** Replicas to WAIT for before acknowledging a webhook. */
      replicasAck: r.replicas_ack === 'auto' ? (topology.kind === 'single' ? 0 : 1) : r.replicas_ack,
      replicasAckTimeoutMs: r.replicas_ack_timeout,
    };
  });

const workerSchema = z
  .strictObject({
    concurrency: integer(1, 1000).prefault(16),
    business_concurrency: integer(1, 1000)
      .optional()
      .describe(
        "With several businesses: one business's fair share of a worker process's event slots; past it, the business gets more only while no other business's events wait, and never more than three quarters of them (default: half of concurrency, rounded up).",
      ),
    attempts: integer(1, 100).prefault(8),
    backoff: z
      .strictObject({ base: durationSchema.prefault('1s'), max: durationSchema.prefault('5m') })
      .prefault({})
      .transform((b) => ({ baseMs: b.base, maxMs: b.max })),
    rate_limit_pause_cap: durationSchema.prefault('60s'),
    auth_failure_pause: durationSchema.prefault('30s'),
    shutdown_grace: durationSchema.prefault('25s'),
    safety_margin: durationSchema
      .prefault('60s')
      .describe('How long before the reply window closes the worker stops sending free-form replies.'),
    lock_duration: durationSchema
      .prefault('30s')
      .describe('Job lock lifetime: a job of a killed worker is picked up again after about this long.'),
    stalled_interval: durationSchema
      .prefault('15s')
      .describe('How often workers look for jobs of dead workers.'),
    reconcile_skew: durationSchema
      .prefault('5s')
      .describe('Clock difference tolerated when looking for an action of unknown outcome in history.'),
    shards: z
      .array(integer(0, 127))
      .min(1, { error: 'list at least one shard number, or leave shards out to consume all' })
      .optional()
      .describe('Queue shards this process consumes (numbers from 0 to redis.shards - 1). Default: all.'),
  })
  .superRefine((w, ctx) => {
    if (w.business_concurrency !== undefined && w.business_concurrency > w.concurrency) {
      ctx.addIssue({
        code: 'custom',
        path: ['business_concurrency'],
        message: `${w.business_concurrency} is more than worker.concurrency (${w.concurrency}), so one business could still take every slot; use at most ${w.concurrency}`,
      });
    }
  })
  .transform((w) => ({
    shards: w.shards === undefined ? null : [...new Set(w.shards)].sort((a, b) => a - b),
    concurrency: w.concurrency,
    businessConcurrency: w.business_concurrency ?? Math.max(1, Math.ceil(w.concurrency / 2)),
    attempts: w.attempts,
    backoff: w.backoff,
    rateLimitPauseCapMs: w.rate_limit_pause_cap,
    authFailurePauseMs: w.auth_failure_pause,
    shutdownGraceMs: w.shutdown_grace,
    safetyMarginMs: w.safety_margin,
    lockDurationMs: w.lock_duration,
    stalledIntervalMs: w.stalled_interval,
    reconcileSkewMs: w.reconcile_skew,
  }));

/** The `worker:` section, validated and with its defaults: the worker's settings, handed down whole. */
export type WorkerSettings = z.output<typeof workerSchema>;

/**
 * Worker settings from a partial `worker:` section (as written in YAML), the rest defaulted by the
 * schema: for code that builds a worker without a config file (tests, tools).
 */
export function parseWorkerSettings(section: z.input<typeof workerSchema> = {}): WorkerSettings {
  return workerSchema.parse(section);
}

/** The shortest admin password accepted: the login throttle slows guessing, it cannot make a short password long. */
export const ADMIN_PASSWORD_MIN_LENGTH = 12;

/** The shortest `admin.link_secret` accepted: it signs tokens that anyone holding one may present. */
export const LINK_SECRET_MIN_LENGTH = 32;

/** `admin.listen`: `HOST:PORT`, an IPv6 host in brackets; port 0 takes a free one. */
const listenSchema = z
  .string()
  .trim()
  .transform((text, ctx) => {
    const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:\s[\]]+):(\d{1,5})$/.exec(text);
    const port = Number(match?.[2]);
    if (!match?.[1] || !(port >= 0 && port <= 65_535)) {
      ctx.addIssue({
        code: 'custom',
        message: `"${text}" is not HOST:PORT: write e.g. 127.0.0.1:9090 (an IPv6 host in brackets: [::1]:9090)`,
      });
      return z.NEVER;
    }
    return { host: match[1], port };
  });

/** An origin allowed to frame the admin pages: scheme, host and port, no path; read as the URL's origin. */
const originSchema = z.string().transform((text, ctx) => {
  let origin: string | undefined;
  try {
    origin = new URL(text).origin;
  } catch {
    origin = undefined;
  }
  if (origin === undefined || origin === 'null' || origin !== text.replace(/\/$/, '')) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" is not an origin: write scheme, host and port only, e.g. https://ops.example.com`,
    });
    return z.NEVER;
  }
  return origin;
});

const adminSchema = z
  .strictObject({
    username: nonEmpty.default('admin'),
    password: nonEmpty
      .min(ADMIN_PASSWORD_MIN_LENGTH, {
        error: `is shorter than ${ADMIN_PASSWORD_MIN_LENGTH} characters: the admin surface faces password guessing; use a longer one (e.g. the output of \`openssl rand -base64 18\`, given through \${ADMIN_PASSWORD})`,
      })
      .optional()
      .describe(
        `The admin surface (bull-board at /admin/queues) is off while this is unset. At least ${ADMIN_PASSWORD_MIN_LENGTH} characters.`,
      ),
    listen: listenSchema
      .optional()
      .describe(
        'HOST:PORT of the admin surface, apart from the webhooks (e.g. 127.0.0.1:9090). Unset: served on the receiver port.',
      ),
    frame_ancestors: z
      .array(originSchema)
      .default([])
      .describe(
        "Origins allowed to show the admin pages in a frame (e.g. https://ops.example.com). Default: none (frame-ancestors 'none').",
      ),
    link_secret: nonEmpty
      .min(LINK_SECRET_MIN_LENGTH, {
        error: `is shorter than ${LINK_SECRET_MIN_LENGTH} characters: it signs the console links handed to merchants; use e.g. the output of \`openssl rand -base64 32\`, given through \${CONSOLE_LINK_SECRET}`,
      })
      .optional()
      .describe(
        `Signs the console links (\`convo-bridge console link\`) whose tokens open one business's API and console. Unset: no link works, only the admin password. Changing it revokes every link. At least ${LINK_SECRET_MIN_LENGTH} characters.`,
      ),
  })
  .transform((a) => ({
    username: a.username,
    password: a.password,
    /** null: on the receiver's host and port. */
    listen: a.listen ?? null,
    frameAncestors: a.frame_ancestors,
    /** null: console links are off (every Bearer token is refused). */
    linkSecret: a.link_secret ?? null,
  }));

export type AdminSettings = z.output<typeof adminSchema>;

const logSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/**
 * The fields of the event a forward carries (`{type, rule, action, event}`: docs/rules.md,
 * "Forward to a CRM"), as the CRM sees them; what `destinations.NAME.fields` may name.
 */
export const FORWARD_FIELDS = ConversationEventSchema.keyof().options;
export type ForwardField = (typeof FORWARD_FIELDS)[number];

const forwardFieldSchema = z.enum(FORWARD_FIELDS, {
  error: (issue) => {
    if (typeof issue.input !== 'string')
      return `name a field of the event: one of ${FORWARD_FIELDS.join(', ')}`;
    const written = issue.input;
    const head = written.split('.')[0] ?? '';
    const hint = (FORWARD_FIELDS as readonly string[]).includes(head)
      ? `: fields are named whole; "${head}" carries it`
      : closestNameHint(written, FORWARD_FIELDS, FORWARD_FIELDS.length);
    return `"${written}" is not a field of a forwarded event${hint}`;
  },
});

const destinationSchema = z
  .strictObject({
    url: httpUrl('https://crm.example.com/hooks'),
    secret: nonEmpty.optional(),
    timeout: durationSchema.prefault('10s'),
    retries: integer(0, 10).prefault(3),
    fields: z
      .array(forwardFieldSchema)
      .min(1, { error: 'name at least one field, or leave fields out to send the whole event' })
      .optional()
      .describe(
        'Only these fields of the event go to this destination (type, rule and action always do); unset: the whole event. E.g. [kind, conversationId, channel, occurredAt] for a CRM that needs no text.',
      ),
  })
  .transform((d) => ({
    url: d.url,
    secret: d.secret ?? null,
    timeoutMs: d.timeout,
    retries: d.retries,
    // In the event's own order, each once: the CRM sees the same shape whatever order was written.
    fields: d.fields === undefined ? null : FORWARD_FIELDS.filter((field) => d.fields?.includes(field)),
  }));

/**
 * record.redact: texts replaced, or kinds of personal data masked in texts, captions and names.
 * `personal` is the shortcut for the four kinds; each may still be set on its own. All off by
 * default, as before the option existed: a recording is for backtests, and masked texts judge
 * keyword and regex conditions differently.
 */
const redactSchema = z
  .strictObject({
    texts: z
      .boolean()
      .default(false)
      .describe(
        'Store texts and captions as "[redacted]" (backtests then cannot judge keywords or regexes).',
      ),
    personal: z
      .boolean()
      .default(false)
      .describe('Shortcut: the default of phones, emails, cards and national_ids.'),
    phones: z
      .boolean()
      .optional()
      .describe(
        'Replace runs of 7 or more digits (phone numbers: +62 812-3456-7890, 0812 3456 7890, (021) 555-1234) in texts and names by "#". Unset: personal.',
      ),
    emails: z
      .boolean()
      .optional()
      .describe(
        'Replace the letters and digits of e-mail addresses in texts and names by "#". Unset: personal.',
      ),
    cards: z
      .boolean()
      .optional()
      .describe(
        'Replace payment card numbers (13-19 digits, single spaces or dashes between, Luhn check passed) in texts and names by "#". Unset: personal.',
      ),
    national_ids: z
      .boolean()
      .optional()
      .describe(
        'Replace Indonesian identity numbers (NIK: 16 digits with a province code, a birth date and a serial) in texts and names by "#". Unset: personal.',
      ),
  })
  .transform((r) => ({
    texts: r.texts,
    phones: r.phones ?? r.personal,
    emails: r.emails ?? r.personal,
    cards: r.cards ?? r.personal,
    nationalIds: r.national_ids ?? r.personal,
  }));

const recordSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Keep the canonical events the worker ran, each with its facts and plan, in Redis (for convo-bridge events and backtest).',
      ),
    max_age: durationSchema
      .optional()
      .describe('Old name of retention.recorded_events (still read; validate warns). Not both.'),
    max_count: integer(1, 10_000_000)
      .prefault(100_000)
      .describe('At most this many recorded events are kept (the oldest go first).'),
    redact: redactSchema.prefault({}),
  })
  .transform((r) => ({
    enabled: r.enabled,
    /** Written under its old name (the schema moves it to retention.recorded_events; null when not written). */
    oldMaxAgeMs: r.max_age ?? null,
    maxCount: r.max_count,
    redact: r.redact,
  }));

/** Most entries a conversation's story keeps (the oldest go first). */
export const MAX_STORY_ENTRIES = 10_000;

/**
 * `story:`, the conversations' stories (story/): what the bridge did in each conversation, to whom
 * and why, written by the worker's finish step, searched and read by the operator API. Top level
 * only; kept `retention.stories`.
 */
const storySchema = z
  .strictObject({
    // Off by default: measured side by side (bench:ab), the story's writes inside the finish script
    // cost x1.73 Redis CPU and x1.095 bridge CPU per event, over the budget it must meet to be on.
    enabled: z
      .boolean()
      .default(false)
      .describe(
        "Keep each conversation's story (events, rules' verdicts, actions and their outcomes, timers, tags, the reply window), its search index and hourly stats in Redis, for the operator API. Off by default until it costs less per event.",
      ),
    max_entries: integer(10, MAX_STORY_ENTRIES)
      .prefault(200)
      .describe("Entries kept per conversation's story (the oldest go first)."),
    redact: redactSchema
      .prefault({})
      .describe(
        "What of the customers' texts and names a story keeps (as record.redact). The search index keeps phone numbers, e-mail addresses and names whatever this says: forget erases them.",
      ),
  })
  .transform((s) => ({ enabled: s.enabled, maxEntries: s.max_entries, redact: s.redact }));

/** The `story:` section, validated and with its defaults. */
export type StorySettings = z.output<typeof storySchema>;

/** Story settings from a partial `story:` section (tests, tools). */
export function parseStorySettings(section: z.input<typeof storySchema> = {}): StorySettings {
  return storySchema.parse(section);
}

/**
 * How long the bridge keeps what it stores: one section, read by the receiver
 * and the worker alike, top level only (the queues, dedupe markers and run state it bounds are
 * shared by every business of a bridge that serves several). Expiry is by Redis TTL on keys the
 * bridge writes anyway, or by a bounded trim when a store is written; see docs/configuration.md,
 * "Retention".
 */
const RETENTION_DEFAULTS = { recorded_events: '7d', dedupe: '72h' } as const;

/** A retention duration: at least one second (Redis expiries count whole seconds). */
function keptFor(description: string) {
  return durationSchema.refine((ms) => ms >= 1_000, { error: 'must be at least 1s' }).describe(description);
}

/** The platform redelivers a webhook for a few minutes (3 retries ~30 s apart, exponential back-off in its older doc). */
export const REDELIVERY_HORIZON_MS = 5 * 60_000;

const retentionSchema = z
  .strictObject({
    done_events: durationSchema
      .prefault('0s')
      .describe(
        "The data of done events and fired timers (BullMQ's completed jobs, with what each run did). 0s: removed the moment the job completes; a duration keeps them that long (at most 10,000 per queue).",
      ),
    failed_events: keptFor(
      "BullMQ's failed jobs (their data and error), at most 10,000 per queue; the dead letter keeps what a replay needs.",
    ).prefault('7d'),
    dead_letters: keptFor(
      'Dead letters (the event or timer with the reason); the run state a replay needs is kept as long.',
    ).prefault('30d'),
    quarantine: keptFor(
      'Quarantined webhook bodies (at most 10,000); the whole quarantine expires this long after its last new entry.',
    ).prefault('30d'),
    conversations: keptFor(
      "A conversation's state (last customer message, once-marks, cooldowns, sent texts, timers) after its last customer message; never before a pending timer fires.",
    ).prefault('30d'),
    recorded_events: keptFor(
      `Recorded events (record.enabled); the whole store expires this long after its last write. Default: ${RETENTION_DEFAULTS.recorded_events} (or the old record.max_age).`,
    ).optional(),
    dedupe: durationSchema
      .refine((ms) => ms >= 60_000 && ms <= 90 * 86_400_000, { error: 'must be from 1m to 90d' })
      .optional()
      .describe(
        `How long a delivered event is recognised as a duplicate (its dedupe marker), from 1m to 90d; keep it past the platform's redeliveries. Default: ${RETENTION_DEFAULTS.dedupe} (or the old receiver.dedupe_window).`,
      ),
    stories: keptFor(
      "The conversations' stories (story.enabled): each story, its search index entries and the hourly stats expire this long after the conversation's last event.",
    ).prefault('30d'),
    event_stream: integer(0, 1_000_000)
      .prefault(100)
      .describe(
        "Entries kept in each queue's BullMQ event stream (approximately: Redis trims whole blocks of about 100); each names a job and what it returned or why it failed.",
      ),
  })
  .transform((r) => ({
    settings: {
      doneEventsMs: r.done_events,
      failedEventsMs: r.failed_events,
      deadLettersMs: r.dead_letters,
      quarantineMs: r.quarantine,
      conversationsMs: r.conversations,
      storiesMs: r.stories,
      recordedEventsMs: r.recorded_events ?? defaultMs(RETENTION_DEFAULTS.recorded_events),
      dedupeMs: r.dedupe ?? defaultMs(RETENTION_DEFAULTS.dedupe),
      eventStreamMaxLen: r.event_stream,
    },
    /** The keys that have an old name elsewhere, when written here (the old one is then refused). */
    written: { recordedEvents: r.recorded_events !== undefined, dedupe: r.dedupe !== undefined },
  }));

function defaultMs(text: string): number {
  return durationSchema.parse(text);
}

/** The `retention:` section, validated and with its defaults: handed down whole. */
export type RetentionSettings = z.output<typeof retentionSchema>['settings'];

/**
 * Retention settings from a partial `retention:` section (as written in YAML), the rest defaulted
 * by the schema: for code that builds a receiver or worker without a config file (tests, tools).
 */
export function parseRetentionSettings(section: z.input<typeof retentionSchema> = {}): RetentionSettings {
  return retentionSchema.parse(section).settings;
}

/** A key of an earlier version that a newer key replaced: still read, with a warning. */
export interface OldKey {
  readonly path: readonly ['record', 'max_age'] | readonly ['receiver', 'dedupe_window'];
  readonly replacement: 'retention.recorded_events' | 'retention.dedupe';
}

/**
 * `shadow:`, a candidate rule set evaluated beside the active rules on every live
 * event, without acting (worker/shadow/). The file is read by config/load-shadow-rules.ts.
 */
const shadowSchema = z
  .strictObject({
    rules: nonEmpty.describe(
      'A YAML file (relative to the file that names it) holding a `rules:` list: the candidate rules, evaluated beside the active ones on every live event without acting; where their plans differ, the difference is counted and kept for `convo-bridge shadow report`.',
    ),
    examples: integer(1, 1000)
      .prefault(20)
      .describe(
        'Per rule, the last this many differences kept as examples (conversation, time, both plans).',
      ),
    max_age: durationSchema
      .prefault('7d')
      .describe(
        'Shadow counts and examples older than this are dropped (hourly counts; examples when none is newer).',
      ),
  })
  .transform((s) => ({ rulesFile: s.rules, examples: s.examples, maxAgeMs: s.max_age }));

const tracingSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .optional()
      .describe(
        'OpenTelemetry traces of each webhook, through the queue, to each platform call and forward. Unset: on when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; OTEL_SDK_DISABLED=true turns it off.',
      ),
    endpoint: httpUrl('http://localhost:4318/v1/traces')
      .optional()
      .describe(
        'Full OTLP/HTTP traces address (JSON). Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces.',
      ),
    service_name: nonEmpty
      .optional()
      .describe('service.name of the spans; unset: OTEL_SERVICE_NAME, else convo-bridge.'),
  })
  .transform((t) => ({
    enabled: t.enabled ?? null,
    endpoint: t.endpoint ?? null,
    serviceName: t.service_name ?? null,
  }));

export const DESTINATION_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export const configSchema = z
  .strictObject({
    platform: platformSchema,
    receiver: receiverSchema,
    redis: redisSchema.prefault({}),
    worker: workerSchema.prefault({}),
    admin: adminSchema.prefault({}),
    log: logSchema.prefault({}),
    timezone: timezoneSchema,
    business_hours: businessHoursSchema.optional(),
    channels: z
      .array(channelSchema)
      .default([])
      .describe(
        'First match wins; a channel no entry matches gets the built-in kind of its engine (waba -> whatsapp_api, wa -> whatsapp_qr, whatsapp -> whatsapp_api, instagram, facebook -> messenger, ...).',
      ),
    reply_window: replyWindowSchema.prefault({}),
    destinations: z
      .record(
        z
          .string()
          .regex(DESTINATION_NAME_PATTERN, { error: 'a destination name uses letters, digits, - and _' }),
        destinationSchema,
      )
      .default({}),
    rules: z.array(ruleSchema).default([]),
    record: recordSchema.prefault({}),
    retention: retentionSchema.prefault({}),
    story: storySchema.prefault({}),
    tracing: tracingSchema.prefault({}),
    shadow: shadowSchema.optional(),
  })
  .superRefine((c, ctx) => {
    for (const old of oldKeysOf(c)) {
      const written = old.replacement === 'retention.dedupe' ? 'dedupe' : 'recordedEvents';
      if (c.retention.written[written]) {
        ctx.addIssue({
          code: 'custom',
          path: [...old.path],
          message: `${old.path.join('.')} is the old name of ${old.replacement}, which is set too: remove ${old.path.join('.')} (${old.replacement} is the one read)`,
        });
      }
    }
    for (const [i, shard] of (c.worker.shards ?? []).entries()) {
      if (shard >= c.redis.shards) {
        ctx.addIssue({
          code: 'custom',
          path: ['worker', 'shards', i],
          message: `shard ${shard} does not exist: redis.shards is ${c.redis.shards}, so shards are numbered 0 to ${c.redis.shards - 1}`,
        });
      }
    }
  })
  .transform((c) => ({
    platform: c.platform,
    // Interface, "Authentication" rule 3 and "Events": webhook calls carry the Secret Key.
    receiver: {
      ...withoutKey(c.receiver, 'oldDedupeWindowMs'),
      secrets: c.receiver.secrets ?? [c.platform.auth.secret],
      /** True when `secrets` was not written and the platform Secret Key was taken (validate says so). */
      secretsDefaulted: c.receiver.secrets === undefined,
    },
    redis: c.redis,
    worker: c.worker,
    admin: c.admin,
    log: c.log,
    timezone: c.timezone,
    businessHours: c.business_hours ?? null,
    channels: c.channels,
    replyWindow: c.reply_window,
    destinations: c.destinations,
    rules: c.rules,
    record: withoutKey(c.record, 'oldMaxAgeMs'),
    // An old key (record.max_age, receiver.dedupe_window) stands in for its new one (both: refused above).
    retention: {
      ...c.retention.settings,
      recordedEventsMs: c.record.oldMaxAgeMs ?? c.retention.settings.recordedEventsMs,
      dedupeMs: c.receiver.oldDedupeWindowMs ?? c.retention.settings.dedupeMs,
    },
    story: c.story,
    /** Keys written under an earlier version's name (validate warns about each). */
    oldKeys: oldKeysOf(c),
    tracing: c.tracing,
    /** null: no shadow rules (the candidate's compiled rules are the loader's, LoadedBusiness.shadow). */
    shadow: c.shadow ?? null,
  }));

/** The old keys a parsed config wrote. */
function oldKeysOf(c: {
  record: { oldMaxAgeMs: number | null };
  receiver: { oldDedupeWindowMs: number | null };
}): OldKey[] {
  const found: OldKey[] = [];
  if (c.record.oldMaxAgeMs !== null) {
    found.push({ path: ['record', 'max_age'], replacement: 'retention.recorded_events' });
  }
  if (c.receiver.oldDedupeWindowMs !== null) {
    found.push({ path: ['receiver', 'dedupe_window'], replacement: 'retention.dedupe' });
  }
  return found;
}

function withoutKey<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}

/** The typed, validated config with defaults applied. */
export type BridgeConfig = z.output<typeof configSchema>;
