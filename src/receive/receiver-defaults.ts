import { parseRetentionSettings, receiverSchema, redisSchema } from '../config/config-schema.js';
import { DEFAULT_QUARANTINE_BODY_BYTES, DEFAULT_QUARANTINE_MAX } from './quarantine-store.js';

// Defaults are written once, in the config schema, so that the receiver's and the config's cannot
// drift apart: createReceiver's are the config's `receiver:`, `redis:` and `retention:` sections
// as the schema fills in empty ones, in the receiver's units.
const receiverSection = receiverSchema.parse({});
const redisSection = redisSchema.parse({});
/** The `retention:` section as the schema fills in an empty one. */
export const DEFAULT_RETENTION = parseRetentionSettings();

/** Defaults of createReceiver's options (and of the event producer's replica acknowledgement). */
export const RECEIVER_DEFAULTS = {
  path: receiverSection.path,
  bodyLimitBytes: receiverSection.bodyLimitBytes,
  dedupeWindowSeconds: Math.ceil(DEFAULT_RETENTION.dedupeMs / 1000),
  enqueueTimeoutMs: receiverSection.enqueueTimeoutMs,
  prefix: redisSection.prefix,
  /** With one Redis (the default topology): no replica to wait for. */
  replicasAck: redisSection.replicasAck,
  replicasAckTimeoutMs: redisSection.replicasAckTimeoutMs,
  quarantineMax: DEFAULT_QUARANTINE_MAX,
  quarantineBodyBytes: DEFAULT_QUARANTINE_BODY_BYTES,
  quarantineMaxAgeSeconds: Math.ceil(DEFAULT_RETENTION.quarantineMs / 1000),
  eventStreamMaxLen: DEFAULT_RETENTION.eventStreamMaxLen,
  /** Not a config setting: the bridge passes its outage report interval (30 s unless a test sets it). */
  repeatLogIntervalMs: 30_000,
} as const;
