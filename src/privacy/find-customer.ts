import type { z } from 'zod';
import type { Customer } from '../base/customer-match.js';
import { customerIn } from '../base/customer-match.js';
import { jobBusinessField, tagOfJob } from '../events/business-naming.js';
import { ConversationEventSchema } from '../events/conversation-event.js';
import { BatchedEventSchema } from '../queue/event-job.js';
import type { KeyLayout } from '../queue/key-layout.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { storiesOfCustomer } from '../story/forget-story.js';
import { checkEveryNode } from './check-every-node.js';
import { eraseEntries } from './global-stores.js';
import { parseJson } from './job-data.js';
import { customerInEvent, customerNeedles } from './needles.js';
import { findInHash, findJobs } from './scan-stores.js';

/**
 * `forget --customer`: the conversations whose stored texts or names hold a phone number or an
 * e-mail address, found in every store that keeps texts (queued, failed and kept jobs of every
 * shard, timers, dead letters, recorded events, quarantined bodies, the stories' search index). Each store is searched inside
 * Redis for a coarse match, then every candidate is confirmed on its parsed events.
 */
export interface CustomerMatches {
  /** Conversation ids, sorted. */
  conversations: string[];
  /** Quarantined bodies that hold the customer but name no conversation (erased on their own). */
  quarantineIds: string[];
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null;

/** What of a batched event (queue/event-job.ts) says whose it is and may hold the customer. */
const SearchedEventSchema = BatchedEventSchema.pick({ business: true }).extend({
  event: ConversationEventSchema.pick({
    conversationId: true,
    text: true,
    caption: true,
    senderName: true,
    conversationLabel: true,
  }),
});
type SearchedEvent = z.infer<typeof SearchedEventSchema>;

/** The events of a batch's data, or the one event of a timer's; entries that cannot be read are skipped. */
function eventsOf(value: unknown): SearchedEvent[] {
  if (!isObject(value)) return [];
  const items: unknown[] = Array.isArray(value.events) ? value.events : [value];
  return items.flatMap((item) => {
    const parsed = SearchedEventSchema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

export async function findCustomer(
  redis: RedisClient,
  layout: KeyLayout,
  customer: Customer,
): Promise<CustomerMatches> {
  await checkEveryNode(redis);
  const needles = customerNeedles(customer);
  const found = new Set<string>();
  const collect = (value: unknown) => {
    for (const { event, business } of eventsOf(value)) {
      if (tagOfJob(business) !== layout.naming.tag || event.conversationId === null) continue;
      if (customerInEvent(event, customer)) found.add(event.conversationId);
    }
  };
  for (const shard of layout.all) {
    for (const name of [QUEUE_NAMES.events, QUEUE_NAMES.timers]) {
      const queueKey = `${shard.queuePrefix}:${name}`;
      for (const id of (await findJobs(redis, queueKey, needles)).keys()) {
        collect(parseJson(await redis.hget(`${queueKey}:${id}`, 'data')));
      }
    }
  }
  const keys = layout.global;
  for (const id of await redis.zrange(keys.deadIndex, 0, -1)) {
    const entry = parseJson(await redis.get(keys.dead(id)));
    if (isObject(entry)) collect(entry.data);
  }
  for (const id of await findInHash(redis, keys.recordedEntries, needles)) {
    const line = parseJson(await redis.hget(keys.recordedEntries, id));
    if (isObject(line)) collect({ events: [{ event: line.event, ...jobBusinessField(layout.naming) }] });
  }
  // The stories' index knows every conversation where the customer wrote the number or address
  // (also those whose events are gone from every other store).
  for (const shard of layout.all) {
    for (const id of await storiesOfCustomer(redis, shard.keys, customer)) found.add(id);
  }
  const quarantineIds: string[] = [];
  for (const id of await findInHash(redis, keys.quarantineEntries, needles)) {
    const entry = parseJson(await redis.hget(keys.quarantineEntries, id));
    if (!isObject(entry) || !customerIn(typeof entry.body === 'string' ? entry.body : '', customer)) continue;
    if (typeof entry.conversationId === 'string') found.add(entry.conversationId);
    else quarantineIds.push(id);
  }
  return { conversations: [...found].sort(), quarantineIds };
}

/** Erases quarantined bodies that hold the customer and name no conversation. */
export async function forgetQuarantineIds(
  redis: RedisClient,
  layout: KeyLayout,
  ids: readonly string[],
  dryRun: boolean,
): Promise<number> {
  await checkEveryNode(redis);
  return eraseEntries(redis, layout.global.quarantineEntries, layout.global.quarantine, ids, dryRun);
}
