/**
 * One conversation's share of a job's stored JSON (a batch of events, a timer, a run's result),
 * read loosely: the data crossed Redis and may come from another version, so anything that is not
 * the expected shape is left as it is rather than guessed at.
 */

/** Which events are the conversation's: its id, in its business (null: a config without `businesses:`). */
export interface ConversationRef {
  conversationId: string;
  business: string | null;
}

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null;

function eventOf(item: unknown): Loose | undefined {
  return isObject(item) && isObject(item.event) ? item.event : undefined;
}

/** Whether a batched event (`{arrival, business?, event}`) or a timer's data belongs to the conversation. */
export function belongsTo(item: unknown, ref: ConversationRef): boolean {
  if (!isObject(item)) return false;
  const business = typeof item.business === 'string' ? item.business : null;
  if (business !== ref.business) return false;
  const conversationId = eventOf(item)?.conversationId ?? item.conversationId;
  return conversationId === ref.conversationId;
}

export interface StrippedBatch {
  /** The data without the conversation's events (undefined: the data was nothing but them). */
  data: Loose | undefined;
  /** Event keys of the conversation's events that were in it. */
  eventKeys: string[];
}

/**
 * A batch job's data (`{events: [...], finished?, failures?}`) without the conversation's events,
 * their results and their failure counts. Null when the data holds none of them.
 */
export function stripBatch(data: unknown, ref: ConversationRef): StrippedBatch | null {
  if (!isObject(data) || !Array.isArray(data.events)) return null;
  const theirs = data.events.filter((item) => belongsTo(item, ref));
  if (theirs.length === 0) return null;
  const eventKeys = theirs
    .map((item) => eventOf(item)?.key)
    .filter((k): k is string => typeof k === 'string');
  const rest = data.events.filter((item) => !belongsTo(item, ref));
  if (rest.length === 0) return { data: undefined, eventKeys };
  const keys = new Set(eventKeys);
  const stripped: Loose = { ...data, events: rest };
  if (Array.isArray(data.finished)) stripped.finished = withoutResults(data.finished, keys);
  if (isObject(data.failures)) {
    stripped.failures = Object.fromEntries(Object.entries(data.failures).filter(([key]) => !keys.has(key)));
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
