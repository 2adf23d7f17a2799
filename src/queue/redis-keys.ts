import { createHash } from 'node:crypto';

/** Queue names under the configured prefix. BullMQ keys become `<prefix>:<queue>:...`. */
export const QUEUE_NAMES = {
  events: 'events',
  timers: 'timers',
} as const;

export const DEFAULT_PREFIX = 'cb';

/**
 * Key names hash ids (any length, any characters) to fixed-size hex. One event's run names about
 * ten keys of the same conversation, so recent hashes are kept in a small bounded cache.
 */
const HASH_CACHE_MAX = 20_000;
const hashCache = new Map<string, string>();
const sha = (value: string, length = 40): string => {
  let hex = hashCache.get(value);
  if (hex === undefined) {
    hex = createHash('sha256').update(value).digest('hex');
    if (hashCache.size >= HASH_CACHE_MAX) hashCache.clear();
    hashCache.set(value, hex);
  }
  return hex.slice(0, length);
};

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
    /** Ghost markers of order heads whose job vanished (see worker/order-gate.ts). */
    ghostPrefix: (conversationId: string) => `${p}:ghost:${sha(conversationId, 32)}:`,
    /** Facts about a conversation the rules need: last customer message, first message seen. */
    facts: (conversationId: string) => `${p}:facts:${sha(conversationId, 32)}`,
    /** once_per_conversation marks: onceKey -> ISO time. */
    once: (conversationId: string) => `${p}:once:${sha(conversationId, 32)}`,
    /** Cooldowns: rule name -> ISO time it last fired in the conversation. */
    cooldowns: (conversationId: string) => `${p}:cooldown:${sha(conversationId, 32)}`,
    /** Pending timers of a conversation: timer job id -> state. */
    timers: (conversationId: string) => `${p}:timers:${sha(conversationId, 32)}`,
    /** The plan evaluated for an event (or a timer), frozen on first evaluation. */
    plan: (eventKey: string) => `${p}:plan:${sha(eventKey)}`,
    /** Notes and replies just sent into a conversation: text hash -> ms (see worker/execute-actions.ts). */
    recentlySent: (conversationId: string) => `${p}:recent:${sha(conversationId, 32)}`,
    /** The action ledger of an event (or a timer): action id -> LedgerEntry JSON. */
    ledger: (eventKey: string) => `${p}:ledger:${sha(eventKey)}`,
    /** Dead letters: index by time, and one JSON entry per id. */
    deadIndex: `${p}:dead:index`,
    dead: (id: string) => `${p}:dead:entry:${id}`,
    /** GCRA state of the outbound platform call budget. */
    platformRate: `${p}:rate:platform`,
    /** Set while the platform rejects our credentials (401/403): why and since when. */
    authAlarm: `${p}:alarm:auth`,
    prefix: p,
  };
}
export type BridgeKeys = ReturnType<typeof bridgeKeys>;
