import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { META_FIELDS } from './build-story-write.js';
import {
  type ConversationSummary,
  STORY_OUTCOMES,
  type Story,
  type StoryEntry,
  StoryEntrySchema,
  type StoryOutcome,
} from './story-schema.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The fields of a summary hash that start with a prefix, without it. */
function fieldsWith(meta: Record<string, string>, prefix: string): [string, string][] {
  return Object.entries(meta)
    .filter(([field]) => field.startsWith(prefix))
    .map(([field, value]) => [field.slice(prefix.length), value]);
}

/** Tags in force at `now`: name -> ms it expires (null: never). */
function currentTags(meta: Record<string, string>, now: number): { name: string; until: number | null }[] {
  return fieldsWith(meta, META_FIELDS.tag)
    .map(([name, value]) => ({ name, until: value === '0' ? null : Number(value) }))
    .filter((tag) => tag.until === null || tag.until > now)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function hasCurrentTag(meta: Record<string, string>, tag: string, now: number): boolean {
  return currentTags(meta, now).some((t) => t.name === tag);
}

function outcomesOf(meta: Record<string, string>): StoryOutcome[] {
  return STORY_OUTCOMES.filter((outcome) => meta[`${META_FIELDS.outcome}${outcome}`] !== undefined);
}

/** A search answer's line, from the summary hash. */
export function summaryOf(meta: Record<string, string>, now: number): ConversationSummary {
  return {
    conversation: meta[META_FIELDS.id] ?? '',
    customerName: meta[META_FIELDS.name] || null,
    firstAt: iso(Number(meta[META_FIELDS.firstAt] ?? 0)),
    lastAt: iso(Number(meta[META_FIELDS.lastAt] ?? 0)),
    events: Number(meta[META_FIELDS.events] ?? 0),
    lastEvent: meta[META_FIELDS.lastEvent] ?? null,
    rules: fieldsWith(meta, META_FIELDS.rule)
      .map(([rule]) => rule)
      .sort(),
    tags: currentTags(meta, now).map((tag) => tag.name),
    outcomes: outcomesOf(meta),
  };
}

function parseEntries(raw: readonly string[]): StoryEntry[] {
  const entries: StoryEntry[] = [];
  for (const line of raw) {
    try {
      const parsed = StoryEntrySchema.safeParse(JSON.parse(line));
      if (parsed.success) entries.push(parsed.data);
    } catch {
      // An entry that cannot be read is left out rather than failing the whole story.
    }
  }
  return entries;
}

/** One conversation's story, null when there is none (never seen, forgotten, expired). */
export async function readStory(
  redis: RedisClient,
  keys: BridgeKeys,
  business: string,
  conversation: string,
  now: number,
): Promise<Story | null> {
  // One slot (the conversation's), so one pipeline on a cluster too.
  const results = await redis
    .pipeline()
    .hgetall(keys.storyMeta(conversation))
    .lrange(keys.story(conversation), 0, -1)
    .exec();
  const [metaResult, listResult] = results ?? [];
  if (metaResult?.[0]) throw metaResult[0];
  if (listResult?.[0]) throw listResult[0];
  const meta = (metaResult?.[1] ?? {}) as Record<string, string>;
  // The key names hash the id: the id kept inside tells a (most unlikely) collision apart.
  if (meta[META_FIELDS.id] !== conversation) return null;
  const raw = (listResult?.[1] ?? []) as string[];
  const summary = summaryOf(meta, now);
  const phones = fieldsWith(meta, META_FIELDS.phone).map(([, written]) => written);
  const emails = fieldsWith(meta, META_FIELDS.email).map(([, written]) => written);
  const window = meta[META_FIELDS.window];
  return {
    business,
    conversation,
    customer:
      summary.customerName === null && phones.length === 0 && emails.length === 0
        ? null
        : { name: summary.customerName, phones, emails },
    window: window === undefined ? null : { openUntil: window === '' ? null : window },
    tags: currentTags(meta, now).map((tag) => ({
      name: tag.name,
      until: tag.until === null ? null : iso(tag.until),
    })),
    outcomes: summary.outcomes,
    firstAt: summary.firstAt,
    lastAt: summary.lastAt,
    entries: parseEntries(raw),
    truncated: Number(meta[META_FIELDS.entries] ?? 0) > raw.length,
  };
}
