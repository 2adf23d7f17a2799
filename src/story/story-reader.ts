import type { KeyLayout } from '../queue/key-layout.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { hasCurrentTag, readStory, summaryOf } from './read-story.js';
import { StoryQueryError } from './story-query-error.js';
import type { ConversationSummary, SearchPage, Stats, Story, StoryQuery } from './story-schema.js';
import {
  byActivity,
  decodeCursor,
  encodeCursor,
  isAfter,
  planSearch,
  type SearchCursor,
  type SearchPlan,
} from './story-search.js';
import { readStats } from './story-stats.js';

export { StoryQueryError };

/** What the operator API reads of the stories. Every method answers for one business only. */
export interface StoryReader {
  /** The conversation's story; null when there is none (never seen, forgotten, or expired), or the business is unknown. */
  story(business: string, conversation: string): Promise<Story | null>;
  /**
   * Conversations matching the query, the most recently active first. `cursor` is what the
   * previous page returned. Throws StoryQueryError for a cursor it did not make.
   */
  search(
    business: string,
    query: StoryQuery,
    page: { limit: number; cursor?: string | null },
  ): Promise<SearchPage>;
  /** Counts since then (ms since the epoch), from the hourly buckets kept in Redis. */
  stats(business: string, sinceMs: number): Promise<Stats>;
}

export interface StoryReaderOptions {
  redis: RedisClient;
  /** The key layout of a business (its naming), undefined for a business the bridge does not hold. */
  layoutOf: (business: string) => KeyLayout | undefined;
  /** How long stories are kept (`retention.stories`): older index entries are not answered. */
  retentionMs: number;
  now?: () => number;
}

/** Most answers one page gives. */
export const MAX_SEARCH_LIMIT = 200;
/**
 * Most conversations one term's set gives one shard's search: a term that many conversations share
 * (a rule that matches nearly everything) answers with its most recent ones; narrow it by time.
 */
export const MAX_TERM_CANDIDATES = 10_000;

/** The reader over Redis. */
export function createStoryReader(options: StoryReaderOptions): StoryReader {
  const now = options.now ?? Date.now;
  const layout = (business: string) => options.layoutOf(business);
  return {
    async story(business, conversation) {
      const l = layout(business);
      if (!l) return null;
      return readStory(options.redis, l.shardOf(conversation).keys, business, conversation, now());
    },
    async search(business, query, page) {
      const l = layout(business);
      if (!l) return { conversations: [], cursor: null };
      if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_SEARCH_LIMIT) {
        throw new StoryQueryError(`limit must be from 1 to ${MAX_SEARCH_LIMIT}`);
      }
      const cursor = page.cursor ? decodeCursor(page.cursor) : null;
      return searchStories(options.redis, l, query, page.limit, cursor, now(), options.retentionMs);
    },
    async stats(business, sinceMs) {
      const l = layout(business);
      const at = now();
      const since = Math.max(sinceMs, at - options.retentionMs);
      return readStats(options.redis, l ? l.all.map((s) => s.keys) : [], business, since, at);
    },
  };
}

interface Candidate {
  conversation: string;
  score: number;
}

async function searchStories(
  redis: RedisClient,
  layout: KeyLayout,
  query: StoryQuery,
  limit: number,
  cursor: SearchCursor | null,
  now: number,
  retentionMs: number,
): Promise<SearchPage> {
  const plan = planSearch(query);
  const range = {
    min: Math.max(query.since ?? 0, now - retentionMs),
    max: Math.min(query.until ?? Number.POSITIVE_INFINITY, cursor?.s ?? Number.POSITIVE_INFINITY),
  };
  // Candidates for a page (and one more, to know whether another page follows) from each shard.
  const want = limit + 1;
  const perShard = await Promise.all(
    layout.all.map((shard) => shardCandidates(redis, shard.keys, plan, range, cursor, want)),
  );
  const ordered = perShard.flat().sort(byActivity);
  const conversations: ConversationSummary[] = [];
  let last: Candidate | undefined;
  let more = false;
  // Read the summaries in batches: a few may have been forgotten or expired since the index said so.
  for (let i = 0; i < ordered.length && !more; i += want) {
    const batch = ordered.slice(i, i + want);
    const metas = await Promise.all(
      batch.map((c) => redis.hgetall(layout.shardOf(c.conversation).keys.storyMeta(c.conversation))),
    );
    for (const [j, candidate] of batch.entries()) {
      const meta = metas[j] ?? {};
      if (meta.id !== candidate.conversation) continue;
      if (plan.tag !== null && !hasCurrentTag(meta, plan.tag, now)) continue;
      if (conversations.length === limit) {
        more = true;
        break;
      }
      conversations.push(summaryOf(meta, now));
      last = candidate;
    }
  }
  return {
    conversations,
    cursor: more && last ? encodeCursor({ s: last.score, c: last.conversation }) : null,
  };
}

type Range = { min: number; max: number };

/** One term's set within the range, newest first (bounded). */
async function termMembers(
  redis: RedisClient,
  key: string,
  range: Range,
  count: number,
): Promise<Candidate[]> {
  const max = range.max === Number.POSITIVE_INFINITY ? '+inf' : range.max;
  const flat = await redis.zrevrangebyscore(key, max, range.min, 'WITHSCORES', 'LIMIT', 0, count);
  const out: Candidate[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    out.push({ conversation: flat[i] as string, score: Number(flat[i + 1]) });
  }
  return out;
}

/** Keeps the candidates that are in every one of these terms' sets. */
async function inEvery(
  redis: RedisClient,
  keys: readonly string[],
  candidates: Candidate[],
): Promise<Candidate[]> {
  let kept = candidates;
  for (const key of keys) {
    if (kept.length === 0) break;
    const scores = await redis.zmscore(key, ...kept.map((c) => c.conversation));
    kept = kept.filter((_, i) => scores[i] !== null);
  }
  return kept;
}

/** One shard's candidates for a page: matching, within the range, after the cursor. */
async function shardCandidates(
  redis: RedisClient,
  keys: BridgeKeys,
  plan: SearchPlan,
  range: Range,
  cursor: SearchCursor | null,
  want: number,
): Promise<Candidate[]> {
  const filters = plan.filters.map((term) => keys.storyTerm(term));
  const found = new Map<string, number>();
  const add = (list: readonly Candidate[]) => {
    for (const c of list) if (isAfter(c.score, c.conversation, cursor)) found.set(c.conversation, c.score);
  };
  if (plan.conversation !== null) {
    const score = await redis.zscore(keys.storyIndex, plan.conversation);
    if (score !== null && Number(score) >= range.min && Number(score) <= range.max) {
      add([{ conversation: plan.conversation, score: Number(score) }]);
    }
    for (const group of plan.alternatives) {
      const [first, ...rest] = group.map((term) => keys.storyTerm(term));
      if (first === undefined) continue;
      add(await inEvery(redis, rest, await termMembers(redis, first, range, MAX_TERM_CANDIDATES)));
    }
    return inEvery(
      redis,
      filters,
      [...found].map(([conversation, score]) => ({ conversation, score })),
    );
  }
  const [driver, ...rest] = filters;
  // Without terms: the index, a page at a time (conversations of one ms may share the cursor's score).
  // A single term with nothing to check after it needs only a page too.
  const alone = rest.length === 0 && plan.tag === null;
  const count = driver === undefined || alone ? want + 100 : MAX_TERM_CANDIDATES;
  add(await termMembers(redis, driver ?? keys.storyIndex, range, count));
  return inEvery(
    redis,
    rest,
    [...found].map(([conversation, score]) => ({ conversation, score })),
  );
}
