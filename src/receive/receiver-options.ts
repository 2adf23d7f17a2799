import type { JobsOptions } from 'bullmq';
import type { Express } from 'express';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { RedisTopology } from '../config/redis-topology.js';
import type { KeyLayout } from '../queue/key-layout.js';
import { DEFAULT_PREFIX } from '../queue/redis-keys.js';
import { DEFAULT_QUARANTINE_BODY_BYTES, DEFAULT_QUARANTINE_MAX } from './quarantine-store.js';
import { ReceiverError } from './receiver-errors.js';

/**
 * Options of createReceiver, camelCase. The `serve` command maps the YAML config's `receiver:` and
 * `redis:` sections onto these; nothing here reads files or the environment.
 */
export interface ReceiverOptions {
  /** URL path the platform POSTs to (default `/webhooks/platform`). */
  path?: string;
  /** Accepted shared secrets; more than one during a rotation (old and new). */
  secrets: readonly string[];
  /** Largest accepted body in bytes (default 1 MiB). */
  bodyLimitBytes?: number;
  /** How long a redelivery of one event is recognised as a duplicate (default 72 h). */
  dedupeWindowSeconds?: number;
  /** Bound on storing one event before answering 503 (default 2000 ms). */
  enqueueTimeoutMs?: number;
  /** Redis URL (`redis://[:password@]host:port[/db]`, `rediss://` for TLS). */
  redisUrl?: string;
  /** ioredis connection options, with or instead of `redisUrl`; the receiver's fail-fast settings apply on top. */
  redis?: RedisOptions;
  /** Sentinel or Cluster (the config's `redis:`), instead of `redisUrl`. */
  topology?: RedisTopology;
  /** Key prefix of every key (BullMQ's and the bridge's); default `cb`. */
  prefix?: string;
  /** Queue shards and key tags (queue/key-layout.ts); default one untagged shard under `prefix`. */
  layout?: KeyLayout;
  /** Replicas that must hold an event before its webhook is acknowledged (Redis WAIT); default 0. */
  replicasAck?: number;
  replicasAckTimeoutMs?: number;
  /** Events are stored only once this resolves (the bridge's key-layout check); see event-producer.ts. */
  layoutChecked?: Promise<void>;
  /** Job options of the events queue, merged over DEFAULT_EVENT_JOB_OPTIONS. */
  jobOptions?: JobsOptions;
  /** pino logger; silent when omitted. Secret headers are redacted from anything logged through it. */
  logger?: Logger;
  /** prom-client registry to count webhooks on; when given, `GET /metrics` serves it too. */
  metrics?: Registry;
  /** Most entries kept in the quarantine (oldest dropped first; default 10,000). */
  quarantineMax?: number;
  /** Bytes of each quarantined body kept (default 64 KiB). */
  quarantineBodyBytes?: number;
  /** More routes on the same app (mounted before the JSON 404 handler), e.g. an admin UI. */
  routes?: (app: Express) => void;
  /**
   * An extra readiness condition for `GET /readyz` besides Redis (the worker, shutdown):
   * returns why the process is not ready, or null when it is.
   */
  readiness?: () => string | null | Promise<string | null>;
}

export const RECEIVER_DEFAULTS = {
  path: '/webhooks/platform',
  bodyLimitBytes: 1024 * 1024,
  dedupeWindowSeconds: 72 * 3600,
  enqueueTimeoutMs: 2_000,
  prefix: DEFAULT_PREFIX,
  quarantineMax: DEFAULT_QUARANTINE_MAX,
  quarantineBodyBytes: DEFAULT_QUARANTINE_BODY_BYTES,
} as const;

const Secret = z
  .string()
  .min(1, 'a secret is empty')
  // Node strips leading and trailing whitespace from header values, so such a secret never matches.
  .refine((s) => s.trim() === s, 'a secret starts or ends with whitespace, which HTTP headers cannot carry')
  .refine(
    (s) => !/[\r\n\0]/.test(s),
    'a secret contains a line break or NUL, which HTTP headers cannot carry',
  );

const PlainOptions = z.object({
  path: z
    .string()
    .regex(/^\/[A-Za-z0-9/_.~-]*$/, 'must start with "/" and use only letters, digits and / _ . ~ -')
    .default(RECEIVER_DEFAULTS.path),
  secrets: z.array(Secret).min(1, 'at least one secret is needed'),
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
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
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
});
export type ResolvedReceiverOptions = z.infer<typeof PlainOptions>;

/** Validates the plain options and fills in defaults; throws RECEIVER_CONFIG naming each bad field. */
export function resolveReceiverOptions(options: ReceiverOptions): ResolvedReceiverOptions {
  const parsed = PlainOptions.safeParse({
    path: options.path,
    secrets: options.secrets,
    bodyLimitBytes: options.bodyLimitBytes,
    dedupeWindowSeconds: options.dedupeWindowSeconds,
    enqueueTimeoutMs: options.enqueueTimeoutMs,
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    quarantineMax: options.quarantineMax,
    quarantineBodyBytes: options.quarantineBodyBytes,
  });
  if (!parsed.success) {
    // Issue messages name the field and the rule, never the value (which may be a secret).
    const problems = parsed.error.issues.map((i) => `receiver.${i.path.map(String).join('.')}: ${i.message}`);
    throw new ReceiverError(`invalid receiver options: ${problems.join('; ')}`, {
      code: 'RECEIVER_CONFIG',
      cause: parsed.error,
    });
  }
  if (parsed.data.redisUrl === undefined && options.redis === undefined && options.topology === undefined) {
    throw new ReceiverError(
      'invalid receiver options: give redisUrl (e.g. redis://127.0.0.1:6379) or redis',
      {
        code: 'RECEIVER_CONFIG',
      },
    );
  }
  return parsed.data;
}
