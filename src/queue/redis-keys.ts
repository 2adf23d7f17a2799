import { createHash } from 'node:crypto';
import { type BusinessNaming, SINGLE_BUSINESS_NAMING } from '../events/business-naming.js';

/** Queue names under the configured prefix. BullMQ keys become `<prefix>:<queue>:...`. */
export const QUEUE_NAMES = {
  events: 'events',
  timers: 'timers',
} as const;

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

/** The hash part of a conversation's key names; its first 8 hex digits choose its queue shard. */
export function conversationHash(conversationId: string): string {
  return sha(conversationId, 32);
}

/**
 * A dedupe marker's parts: `<arrival>|<owner batch job id>|<conversation hash, 8 hex>` (markers
 * written before the conversation hash was added have two parts).
 */
export function parseDedupeMarker(value: string): {
  arrival: number;
  jobId: string;
  conversation: string | null;
} {
  const [arrival = '0', jobId = '', conversation] = value.split('|');
  return { arrival: Number(arrival), jobId, conversation: conversation ?? null };
}

/** A dedupe marker as the reserve script writes it (tests and `reshard`). */
export function dedupeMarker(arrival: number, jobId: string, conversationId: string): string {
  return `${arrival}|${jobId}|${conversationHash(conversationId).slice(0, 8)}`;
}

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

/**
 * Every key convo-bridge itself owns (besides BullMQ's), in one place.
 *
 * `prefix` is the key root of one queue shard (BullMQ's prefix of that shard's queues):
 * per-conversation and per-event keys live under it, so every script and MULTI of a run touches
 * keys of one hash slot only (Redis Cluster). `globalPrefix` is the root of the keys that belong
 * to no conversation (dead letters, quarantine, recorded events, alarms); they are never touched
 * together with a shard's keys. With one untagged shard (the default on a single Redis) both are
 * the configured prefix, the layout of earlier versions. See queue/key-layout.ts.
 *
 * A business's naming (events/business-naming.ts) scopes the keys of its conversations and of no
 * conversation: `<prefix>:bridge:b:<id>:conv:...`, `<global>:bridge:b:<id>:dead:...` for a business
 * of its own naming; the keys of earlier versions for the single-business naming. The keys of
 * events (dedupe markers, run state) and the arrival counter are shared: a business's own event
 * keys carry its id already (`<id>:<key>`, receive/event-producer.ts), and one batch job holds the
 * events of several businesses, run by scripts that take one dedupe prefix and one arrival
 * counter. Every key stays under its shard's hash tag.
 */
export function bridgeKeys(
  prefix: string,
  globalPrefix: string = prefix,
  naming: BusinessNaming = SINGLE_BUSINESS_NAMING,
) {
  const scope = naming.keyScope;
  /** Shared by every business of the shard: event keys and the arrival counter. */
  const p = `${prefix}:bridge`;
  /** The business's own: its conversations. */
  const pb = `${prefix}:bridge${scope}`;
  const g = `${globalPrefix}:bridge${scope}`;
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
    conversation: (conversationId: string) => `${pb}:conv:${conversationHash(conversationId)}`,
    /**
     * The conversation's story (story/): its last entries (a capped list of JSON entries), what
     * is known of it for search and the summary (a hash: the id, the customer's name, phones and
     * e-mails, rules matched, outcomes, tags, the index keys it is in), in the conversation's slot.
     */
    story: (conversationId: string) => `${pb}:story:${conversationHash(conversationId)}`,
    storyMeta: (conversationId: string) => `${pb}:story:meta:${conversationHash(conversationId)}`,
    /** The shard's stories by last activity (conversation id -> ms), for listing and time bounds. */
    storyIndex: `${pb}:story:index`,
    /**
     * One search term's conversations (conversation id -> last activity ms): a phone number's last
     * digits, an e-mail address, a word of a name, a tag, a rule, an outcome. Hashed: no customer
     * data in key names.
     */
    storyTerm: (term: string) => `${pb}:story:term:${sha(term, 32)}`,
    /** The counts of one hour (`<hours since 1970>`) of the shard's events: the stats' buckets. */
    storyStats: (hour: number) => `${pb}:story:stats:${hour}`,
    /** The state of one event's run: its frozen plan (`plan`) and action ledger (`a:<action id>`). */
    run: (eventKey: string) => `${p}:run:${sha(eventKey)}`,
    /** Quarantine entries (hash id -> JSON entry), indexed and bounded by `quarantine` (a zset by time). */
    quarantineEntries: `${g}:quarantine:entries`,
    /** Written with a short TTL by the receiver's readiness probe (`GET /readyz`). */
    health: `${g}:health`,
    /** Monotonic arrival counter: the order in which the receiver accepted events. */
    arrival: `${p}:arrival`,
    /** Per-conversation sorted set of job ids still to be processed, scored by arrival. */
    order: (conversationId: string) => `${pb}:order:${conversationHash(conversationId)}`,
    /**
     * Jobs held because no business of the config holds their naming (worker/businesses/held-jobs.ts):
     * `<queue>|<queue prefix>|<job id>` -> naming tag. Shared by every naming.
     */
    heldJobs: `${globalPrefix}:bridge:held`,
    /** Quarantine of authenticated bodies that could not be understood. */
    quarantine: `${g}:quarantine`,
    /** Dead letters: index by time, and one JSON entry per id. */
    deadIndex: `${g}:dead:index`,
    dead: (id: string) => `${g}:dead:entry:${id}`,
    /** Held for a minute by whoever re-queues a dead letter, so that two retries of one never both add it. */
    deadClaim: (id: string) => `${g}:dead:claim:${id}`,
    /**
     * What was changed through the operator API (api/audit-log.ts): a list of JSON entries, newest
     * first, bounded. Shared by every naming: each entry names its business.
     */
    apiAudit: `${globalPrefix}:bridge:api:audit`,
    /** A retry preview's set of dead-letter ids (JSON), by its fingerprint: what the retry must find again. */
    apiPreview: (fingerprint: string) => `${globalPrefix}:bridge:api:preview:${fingerprint}`,
    /** Revoked console links (api/console-link.ts): link id -> when its revocation may be forgotten (ms). */
    linkRevocations: `${globalPrefix}:bridge:api:revoked`,
    /** GCRA state of the outbound platform call budget. */
    platformRate: `${g}:rate:platform`,
    /** Set while the platform rejects our credentials (401/403): why and since when. */
    authAlarm: `${g}:alarm:auth`,
    /** Recorded events (`record:` in the config): index by evaluation time, entries by event id, sequence. */
    recordedIndex: `${g}:recorded:index`,
    recordedEntries: `${g}:recorded:entries`,
    recordedSeq: `${g}:recorded:seq`,
    /**
     * Shadow rules (worker/shadow/): per rule its last differences between the active and
     * the candidate plan (`<rule>|<slot>` -> JSON, a ring of `shadow.examples` slots per rule), the
     * differences per rule since the store began (ring positions), and the counts of one hour
     * (`<hours since 1970>`: events, matches and differences per rule).
     */
    shadowExamples: `${g}:shadow:examples`,
    shadowTotals: `${g}:shadow:totals`,
    shadowCounts: (hour: number) => `${g}:shadow:counts:${hour}`,
    prefix: p,
    /** The root of the keys of no conversation (`<global prefix>:bridge`). */
    globalPrefix: g,
    /** BullMQ's prefix of this shard's queues (shared by every business). */
    queuePrefix: prefix,
    /** The naming these keys are of. */
    naming,
  };
}
export type BridgeKeys = ReturnType<typeof bridgeKeys>;
