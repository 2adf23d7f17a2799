import { tagOfJob } from '../events/business-naming.js';
import { ConversationEventSchema } from '../events/conversation-event.js';
import { BatchedEventSchema, type EventBatchData, EventBatchDataSchema } from '../queue/event-job.js';
import { TimerJobDataSchema } from '../worker/timers/timers.js';

/**
 * One conversation's share of a job's stored JSON (a batch of events, a timer, a run's result),
 * read with the schemas of the rooms that write it (queue/event-job.ts, worker/timers/timers.ts),
 * but only the fields that say whose an entry is: the data crossed Redis and may come from another
 * version, so an entry those fields cannot be read from is left as it is rather than guessed at,
 * and what is written back keeps every field as it was stored.
 */

/**
 * Which events are the conversation's: its id, and the tag of its business's naming (the `business`
 * its jobs carry, '' for the single-business naming: events/business-naming.ts).
 */
export interface ConversationRef {
  conversationId: string;
  tag: string;
}

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null;

/** Whose a batched event is (`{arrival, business?, event}`). */
const BatchedEventOwnerSchema = BatchedEventSchema.pick({ business: true }).extend({
  event: ConversationEventSchema.pick({ key: true, conversationId: true }),
});
/** Whose a timer is (a dead letter names its conversation the same way). */
const TimerOwnerSchema = TimerJobDataSchema.pick({ business: true, conversationId: true });
/** A batch job's results and failure counts (its events are read one by one: one bad entry spoils none). */
const BatchRestSchema = EventBatchDataSchema.pick({ finished: true, failures: true });

function ownerOf(item: unknown): { conversationId: string | null; tag: string; key?: string } | null {
  const timer = TimerOwnerSchema.safeParse(item);
  if (timer.success) return { conversationId: timer.data.conversationId, tag: tagOfJob(timer.data.business) };
  const batched = BatchedEventOwnerSchema.safeParse(item);
  if (!batched.success) return null;
  const { event, business } = batched.data;
  return { conversationId: event.conversationId, tag: tagOfJob(business), key: event.key };
}

/** Whether a batched event (`{arrival, business?, event}`) or a timer's data belongs to the conversation. */
export function belongsTo(item: unknown, ref: ConversationRef): boolean {
  const owner = ownerOf(item);
  return owner !== null && owner.tag === ref.tag && owner.conversationId === ref.conversationId;
}

export interface StrippedBatch {
  /** The data without the conversation's events (undefined: the data was nothing but them). */
  data: Loose | undefined;
  /** Event keys of the conversation's events that were in it. */
  eventKeys: string[];
}

/**
 * A batch job's data (`EventBatchData`) without the conversation's events, their results and their
 * failure counts. Null when the data holds none of them.
 */
export function stripBatch(data: unknown, ref: ConversationRef): StrippedBatch | null {
  if (!isObject(data) || !Array.isArray(data.events)) return null;
  const theirs = data.events.filter((item) => belongsTo(item, ref));
  if (theirs.length === 0) return null;
  const eventKeys = theirs.map((item) => ownerOf(item)?.key).filter((k): k is string => k !== undefined);
  const rest = data.events.filter((item) => !belongsTo(item, ref));
  if (rest.length === 0) return { data: undefined, eventKeys };
  const keys = new Set(eventKeys);
  const stripped: Loose & Partial<Record<keyof EventBatchData, unknown>> = { ...data, events: rest };
  const batch = BatchRestSchema.safeParse(data);
  const { finished, failures } = batch.success ? batch.data : {};
  if (finished !== undefined) stripped.finished = withoutResults(finished, keys);
  if (failures !== undefined) {
    stripped.failures = Object.fromEntries(Object.entries(failures).filter(([key]) => !keys.has(key)));
  }
  return { data: stripped, eventKeys };
}

/** Run results (`{eventKey, conversationId, ...}`) without those of the given events. */
export function withoutResults(results: readonly unknown[], eventKeys: ReadonlySet<string>): unknown[] {
  return results.filter((r) => !(isObject(r) && typeof r.eventKey === 'string' && eventKeys.has(r.eventKey)));
}

/** A batch job's return value (`{events: [results], skipped}`) without the given events' results. */
export function stripReturnValue(value: unknown, eventKeys: ReadonlySet<string>): unknown {
  if (!isObject(value) || !Array.isArray(value.events)) return value;
  return { ...value, events: withoutResults(value.events, eventKeys) };
}

/** JSON.parse that answers undefined instead of throwing (stored values may be anything). */
export function parseJson(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
