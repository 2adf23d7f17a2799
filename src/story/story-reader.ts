import { ConvoBridgeError } from '../base/errors.js';
import type { KeyLayout } from '../queue/key-layout.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { SearchPage, Stats, Story, StoryQuery } from './story-schema.js';

/** A search the reader cannot answer: a cursor it did not make, a query out of bounds (the API answers 400). */
export class StoryQueryError extends ConvoBridgeError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'STORY_QUERY_INVALID', cause });
  }
}

/** What the operator API reads of the stories. Every method answers for one business only. */
export interface StoryReader {
  /** The conversation's story; null when there is none (never seen, forgotten, or expired). */
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

/** The reader over Redis. */
export function createStoryReader(options: StoryReaderOptions): StoryReader {
  return {
    story: async () => null,
    search: async () => ({ conversations: [], cursor: null }),
    stats: async (business, sinceMs) => {
      const now = options.now?.() ?? Date.now();
      return {
        business,
        since: new Date(sinceMs).toISOString(),
        until: new Date(now).toISOString(),
        events: 0,
        actions: {},
        escalations: 0,
        repliesBlocked: 0,
        deadLetters: 0,
        shadowDifferences: 0,
        escalationRate: null,
        firstAgentReply: { count: 0, p50Ms: null, p90Ms: null },
        hours: [],
      };
    },
  };
}
