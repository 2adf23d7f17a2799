import { receiverSchema, redisSchema } from '../config/config-schema.js';
import { DEFAULT_QUARANTINE_BODY_BYTES, DEFAULT_QUARANTINE_MAX } from './quarantine-store.js';

// Defaults are written once, in the config schema (issue 25): createReceiver's are the config's
// `receiver:` and `redis:` sections as the schema fills in empty ones, in the receiver's units.
const receiverSection = receiverSchema.parse({});
const redisSection = redisSchema.parse({});

/** Defaults of createReceiver's options (and of the event producer's replica acknowledgement). */
export const RECEIVER_DEFAULTS = {
  path: receiverSection.path,
  bodyLimitBytes: receiverSection.bodyLimitBytes,
  dedupeWindowSeconds: Math.round(receiverSection.dedupeWindowMs / 1000),
  enqueueTimeoutMs: receiverSection.enqueueTimeoutMs,
  prefix: redisSection.prefix,
  /** With one Redis (the default topology): no replica to wait for. */
  replicasAck: redisSection.replicasAck,
  replicasAckTimeoutMs: redisSection.replicasAckTimeoutMs,
  quarantineMax: DEFAULT_QUARANTINE_MAX,
  quarantineBodyBytes: DEFAULT_QUARANTINE_BODY_BYTES,
  /** Not a config setting: the bridge passes its outage report interval (30 s unless a test sets it). */
  repeatLogIntervalMs: 30_000,
} as const;
