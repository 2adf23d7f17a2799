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

/** The fixed-size id of one event (the hex part of its dedupe marker's key). */
export function eventId(eventKey: string): string {
  return sha(eventKey);
}

/**
 * The events queue carries batches: one job per group commit of the receiver (see
 * queue/ingest-event.ts). Its id is derived from the event ids it was created for, so a retried
 * add of the same batch is recognised by BullMQ.
 */
export function batchJobId(eventKeys: readonly string[]): string {
  return `b-${sha(eventKeys.join('\n'), 32)}`;
}

/**
 * A member of a conversation's order set: which batch job owns the event, and which event. The
 * owner part lets a redelivery take over an event whose batch never reached the queue (the
 * receiver died between reserving and adding it) without the late batch running it twice.
 */
export function orderMember(jobId: string, eventKey: string): string {
  return `${jobId}|${sha(eventKey)}`;
}

/** Every key convo-bridge itself owns (besides BullMQ's), in one place. */
export function bridgeKeys(prefix: string) {
  const p = `${prefix}:bridge`;
  return {
    /** Dedupe marker of one event: `<arrival>|<batch job id>`. Expires after the window. */
    dedupe: (eventKey: string) => `${p}:dedupe:${sha(eventKey)}`,
    /** The marker key without the event id (Lua scripts add the id from an order member). */
    dedupePrefix: `${p}:dedupe:`,
    /**
     * Everything the worker knows about a conversation, in ONE hash so that a run reads it with
     * one command: facts (`lastIn`, `firstIn`, `historyChecked`), once-marks (`O:<key>`),
     * cooldowns (`C:<rule>`), pending timers (`T:<timer id>`) and recently sent texts (`R:<hash>`).
     */
    conversation: (conversationId: string) => `${p}:conv:${sha(conversationId, 32)}`,
    /** The state of one event's run: its frozen plan (`plan`) and action ledger (`a:<action id>`). */
    run: (eventKey: string) => `${p}:run:${sha(eventKey)}`,
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
    /** Dead letters: index by time, and one JSON entry per id. */
    deadIndex: `${p}:dead:index`,
    dead: (id: string) => `${p}:dead:entry:${id}`,
    /** GCRA state of the outbound platform call budget. */
    platformRate: `${p}:rate:platform`,
    /** Set while the platform rejects our credentials (401/403): why and since when. */
    authAlarm: `${p}:alarm:auth`,
    /** Recorded events (`record:` in the config): index by evaluation time, entries by event id, sequence. */
    recordedIndex: `${p}:recorded:index`,
    recordedEntries: `${p}:recorded:entries`,
    recordedSeq: `${p}:recorded:seq`,
    prefix: p,
  };
}
export type BridgeKeys = ReturnType<typeof bridgeKeys>;
