import type { JobsOptions } from 'bullmq';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { BridgeConfig } from '../config/config-schema.js';
import { checkRedisUrl } from '../config/redis-url.js';
import { BusinessIdSchema } from '../events/business-id.js';
import {
  type BusinessNaming,
  businessNaming,
  SINGLE_BUSINESS_ID,
  SINGLE_BUSINESS_NAMING,
} from '../events/business-naming.js';
import { bridgeJobOptions } from '../queue/job-options.js';
import type { EventStoreTarget } from './event-producer.js';
import { RECEIVER_DEFAULTS } from './receiver-defaults.js';
import { ReceiverError } from './receiver-errors.js';

/**
 * Options of createReceiver, camelCase. The `serve` command takes the YAML config's `receiver:` and
 * `redis:` sections whole (receiverOptionsFromConfig); nothing here reads files or the environment.
 * Where events are stored (`redisUrl`, `redis`, `topology`, `layout`, `replicasAck`,
 * `replicasAckTimeoutMs`, `layoutChecked`) is the event producer's EventStoreTarget, handed to it
 * as given.
 */
export interface ReceiverOptions extends EventStoreTarget {
  /**
   * URL path the platform POSTs to (default `/webhooks/platform`): with `secrets`, the receiver
   * serves one business, `default`, of the single-business naming (a config without `businesses:`).
   */
  path?: string;
  /** Accepted shared secrets; more than one during a rotation (old and new). Not with `businesses`. */
  secrets?: readonly string[];
  /**
   * The businesses served, each on its own path with its own secrets; instead of `path` and
   * `secrets`. `Receiver.setBusinesses` changes them while running.
   */
  businesses?: readonly ReceiverBusiness[];
  /** Largest accepted body in bytes (default 1 MiB). */
  bodyLimitBytes?: number;
  /** How long a redelivery of one event is recognised as a duplicate (default 72 h; `retention.dedupe`). */
  dedupeWindowSeconds?: number;
  /** Bound on storing one event before answering 503 (default 2000 ms). */
  enqueueTimeoutMs?: number;
  /** Key prefix of every key (BullMQ's and the bridge's); default `cb`. */
  prefix?: string;
  /** Job options of the events queue, merged over DEFAULT_EVENT_JOB_OPTIONS. */
  jobOptions?: JobsOptions;
  /**
   * Entries kept in the events queue's BullMQ event stream (default 100; `retention.event_stream`).
   * The receiver's queues write it to the queue's meta hash, as the worker's do.
   */
  eventStreamMaxLen?: number;
  /** pino logger; silent when omitted. Secret headers are redacted from anything logged through it. */
  logger?: Logger;
  /**
   * Webhooks answered 503 for the same reason are logged once per this interval with their count,
   * not once each (default 30 s, the bridge's outage report interval).
   */
  repeatLogIntervalMs?: number;
  /** prom-client registry to count webhooks on; when given, `GET /metrics` serves it too. */
  metrics?: Registry;
  /** Most entries kept in the quarantine (oldest dropped first; default 10,000). */
  quarantineMax?: number;
  /** Bytes of each quarantined body kept (default 64 KiB). */
  quarantineBodyBytes?: number;
  /**
   * Entries older than this leave the quarantine when a new one is added, and the whole quarantine
   * expires this long after its last new entry (default 30 days; `retention.quarantine`).
   */
  quarantineMaxAgeSeconds?: number;
  /** More routes on the same app (mounted before the JSON 404 handler), e.g. an admin UI. */
  routes?: (app: Express) => void;
  /**
   * An extra readiness condition for `GET /readyz` besides Redis (the worker, shutdown):
   * returns why the process is not ready, or null when it is.
   */
  readiness?: () => string | null | Promise<string | null>;
  /**
   * More to say in `GET /readyz`'s body, ready or not (a bridge of several businesses: each one's
   * state). It never changes the status code.
   */
  readinessDetails?: () => Record<string, unknown>;
}

/** One business a receiver serves: its webhooks arrive on its path with its secrets. */
export interface ReceiverBusiness {
  readonly id: string;
  readonly path: string;
  readonly secrets: readonly string[];
  /** How its events are stored (events/business-naming.ts); default: its own naming. */
  readonly naming?: BusinessNaming;
}

/** A business as the receiver serves it, its naming decided. */
export type ServedBusiness = Required<ReceiverBusiness>;

const Secret = z
  .string()
  .min(1, 'a secret is empty')
  // Node strips leading and trailing whitespace from header values, so such a secret never matches.
  .refine((s) => s.trim() === s, 'a secret starts or ends with whitespace, which HTTP headers cannot carry')
  .refine(
    (s) => !/[\r\n\0]/.test(s),
    'a secret contains a line break or NUL, which HTTP headers cannot carry',
  );

const WebhookPath = z
  .string()
  .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must start with "/" and use only letters, digits and / _ . ~ -');
const Secrets = z.array(Secret).min(1, 'at least one secret is needed');

const BusinessOptions = z.object({ id: BusinessIdSchema, path: WebhookPath, secrets: Secrets });

const PlainOptions = z.object({
  path: WebhookPath.default(RECEIVER_DEFAULTS.path),
  secrets: Secrets.optional(),
  businesses: z.array(BusinessOptions).optional(),
  bodyLimitBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(RECEIVER_DEFAULTS.bodyLimitBytes),
  dedupeWindowSeconds: z
    .number()
    .int()
    .min(60)
    .max(90 * 24 * 3600)
    .default(RECEIVER_DEFAULTS.dedupeWindowSeconds),
  enqueueTimeoutMs: z.number().int().min(50).max(60_000).default(RECEIVER_DEFAULTS.enqueueTimeoutMs),
  redisUrl: z
    .string()
    .superRefine((text, ctx) => {
      const checked = checkRedisUrl(text);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
    })
    .optional(),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use 1-64 letters, digits, "_", "." or "-"')
    .default(RECEIVER_DEFAULTS.prefix),
  quarantineMax: z.number().int().min(1).max(1_000_000).default(RECEIVER_DEFAULTS.quarantineMax),
  quarantineBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(RECEIVER_DEFAULTS.quarantineBodyBytes),
  quarantineMaxAgeSeconds: z.number().int().min(1).default(RECEIVER_DEFAULTS.quarantineMaxAgeSeconds),
  eventStreamMaxLen: z.number().int().min(0).max(1_000_000).default(RECEIVER_DEFAULTS.eventStreamMaxLen),
  repeatLogIntervalMs: z.number().int().min(10).max(3_600_000).default(RECEIVER_DEFAULTS.repeatLogIntervalMs),
});
export type ResolvedReceiverOptions = Omit<z.infer<typeof PlainOptions>, 'businesses'> & {
  /** Every business served: the given ones, or the one business of `path` and `secrets`. */
  businesses: readonly ServedBusiness[];
};

/** The businesses a receiver's options name, each with its naming. */
export function servedBusinesses(businesses: readonly ReceiverBusiness[]): ServedBusiness[] {
  return businesses.map((business) => ({
    id: business.id,
    path: business.path,
    secrets: business.secrets,
    naming: business.naming ?? businessNaming(business.id, false),
  }));
}

/** Validates the plain options and fills in defaults; throws RECEIVER_CONFIG naming each bad field. */
export function resolveReceiverOptions(options: ReceiverOptions): ResolvedReceiverOptions {
  const parsed = PlainOptions.safeParse({
    path: options.path,
    secrets: options.secrets,
    businesses: options.businesses,
    bodyLimitBytes: options.bodyLimitBytes,
    dedupeWindowSeconds: options.dedupeWindowSeconds,
    enqueueTimeoutMs: options.enqueueTimeoutMs,
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    quarantineMax: options.quarantineMax,
    quarantineBodyBytes: options.quarantineBodyBytes,
    quarantineMaxAgeSeconds: options.quarantineMaxAgeSeconds,
    eventStreamMaxLen: options.eventStreamMaxLen,
    repeatLogIntervalMs: options.repeatLogIntervalMs,
  });
  if (!parsed.success) {
    // Issue messages name the field and the rule, never the value (which may be a secret).
    const problems = parsed.error.issues.map((i) => `receiver.${i.path.map(String).join('.')}: ${i.message}`);
    throw new ReceiverError(`invalid receiver options: ${problems.join('; ')}`, {
      code: 'RECEIVER_CONFIG',
      cause: parsed.error,
    });
  }
  if ((parsed.data.secrets === undefined) === (parsed.data.businesses === undefined)) {
    throw new ReceiverError(
      'invalid receiver options: give either secrets (one business) or businesses (several), not both or neither',
      { code: 'RECEIVER_CONFIG' },
    );
  }
  if (parsed.data.redisUrl === undefined && options.redis === undefined && options.topology === undefined) {
    throw new ReceiverError(
      'invalid receiver options: give redisUrl (e.g. redis://127.0.0.1:6379) or redis',
      {
        code: 'RECEIVER_CONFIG',
      },
    );
  }
  const { businesses: _checked, ...plain } = parsed.data;
  return {
    ...plain,
    businesses: options.businesses
      ? servedBusinesses(options.businesses)
      : [
          {
            id: SINGLE_BUSINESS_ID,
            path: plain.path,
            secrets: plain.secrets ?? [],
            naming: SINGLE_BUSINESS_NAMING,
          },
        ],
  };
}

/**
 * The options the config's validated `receiver:`, `redis:` and `retention:` sections give (the
 * schema filled in their defaults), and the job options of the events queue (`worker.attempts`).
 */
export type ConfiguredReceiverOptions = Required<
  Pick<
    ReceiverOptions,
    | 'path'
    | 'secrets'
    | 'bodyLimitBytes'
    | 'dedupeWindowSeconds'
    | 'enqueueTimeoutMs'
    | 'topology'
    | 'prefix'
    | 'replicasAck'
    | 'replicasAckTimeoutMs'
    | 'jobOptions'
    | 'eventStreamMaxLen'
    | 'quarantineMaxAgeSeconds'
  >
>;

/**
 * The receiver's options from the config's `receiver:`, `redis:` and `retention:` sections, taken
 * whole, so that the composition root does not copy them field by field. The receiver still checks
 * them with its own rules (resolveReceiverOptions), as it does any caller's.
 */
export function receiverOptionsFromConfig(
  config: Pick<BridgeConfig, 'receiver' | 'redis' | 'retention' | 'worker'>,
): ConfiguredReceiverOptions {
  const { receiver, redis, retention } = config;
  return {
    path: receiver.path,
    secrets: receiver.secrets,
    bodyLimitBytes: receiver.bodyLimitBytes,
    dedupeWindowSeconds: Math.ceil(retention.dedupeMs / 1000),
    enqueueTimeoutMs: receiver.enqueueTimeoutMs,
    topology: redis.topology,
    prefix: redis.prefix,
    replicasAck: redis.replicasAck,
    replicasAckTimeoutMs: redis.replicasAckTimeoutMs,
    jobOptions: bridgeJobOptions(config.worker.attempts, retention),
    eventStreamMaxLen: retention.eventStreamMaxLen,
    quarantineMaxAgeSeconds: Math.ceil(retention.quarantineMs / 1000),
  };
}
