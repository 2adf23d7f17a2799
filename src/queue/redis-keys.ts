import { createHash } from 'node:crypto';

/** Queue names under the configured prefix. BullMQ keys become `<prefix>:<queue>:...`. */
export const QUEUE_NAMES = {
  events: 'events',
  timers: 'timers',
} as const;

export const DEFAULT_PREFIX = 'cb';

const sha = (value: string, length = 40) => createHash('sha256').update(value).digest('hex').slice(0, length);

/**
 * BullMQ job ids must not contain ':' and must not be all digits. Derive them from the event key
 * with a fixed prefix so that a redelivery maps to the same id.
 */
export function eventJobId(eventKey: string): string {
  return `ev-${sha(eventKey)}`;
}

/** Every key convo-bridge itself owns (besides BullMQ's), in one place. */
export function bridgeKeys(prefix: string) {
  const p = `${prefix}:bridge`;
  return {
    /** Dedupe marker of one event: `r:<arrival>` reserved, `q:<arrival>` queued. Expires after the window. */
    dedupe: (eventKey: string) => `${p}:dedupe:${sha(eventKey)}`,
    /** Quarantine entries (hash id -> JSON entry), indexed and bounded by `quarantine` (a zset by time). */
    quarantineEntries: `${p}:quarantine:entries`,
    /** Written with a short TTL by the receiver's readiness probe (`GET /readyz`). */
    health: `${p}:health`,
    /** Monotonic arrival counter: the order in which the receiver accepted events. */
    arrival: `${p}:arrival`,
    /** Per-conversation sorted set of job ids still to be processed, scored by arrival. */
    order: (conversationId: string) => `${p}:order:${sha(conversationId, 32)}`,
    /** Quarantine of authenticated bodies that could not be understood. */
    quarantine: `${p}:quarantine`,
    prefix: p,
  };
}
export type BridgeKeys = ReturnType<typeof bridgeKeys>;
