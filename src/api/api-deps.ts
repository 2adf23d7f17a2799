import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { BridgeConfig } from '../config/config-schema.js';
import type { BusinessNaming } from '../events/business-naming.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import type { IngestResult } from '../queue/ingest-event.js';
import type { KeyLayout } from '../queue/key-layout.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import type { StoryReader } from '../story/story-reader.js';

/** One business as the API sees it: the bridge's businesses as served now (hot reloads included). */
export interface ApiBusiness {
  readonly id: string;
  readonly naming: BusinessNaming;
  readonly config: BridgeConfig;
  readonly rules: CompiledRules;
}

/** What the operator API is built with, by the composition root (bridge/start-admin.ts). */
export interface ApiDeps {
  redis: RedisClient;
  /** The bridge's key layout (the single-business naming's; each business's by `forNaming`). */
  layout: KeyLayout;
  businesses(): readonly ApiBusiness[];
  /** `/readyz`'s word on each business by id: `ok`, or why it is paused. */
  businessStates(): Record<string, string>;
  /** The queues of a shard (by its index), to put a dead letter back or act on a timer. */
  queues(shard: number): { events: Queue; timers: Queue };
  /** The receiver's exactly-once ingest for a business's naming (a quarantined body's replay). */
  ingestFor(naming: BusinessNaming): (event: ConversationEvent) => Promise<IngestResult>;
  /** The conversations' stories, their search and the stats. */
  stories: StoryReader;
  /** Signs and checks console links; null: no link works. */
  linkSecret: string | null;
  log: Logger;
  now?: () => number;
}
