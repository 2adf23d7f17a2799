import { type Customer, customerIn } from '../base/customer-match.js';
import type { BridgeKeys } from '../queue/redis-keys.js';
import type { RedisClient } from '../redis/redis-client.js';
import { defineRedisScript } from '../redis/redis-script.js';
import { META_FIELDS } from './build-story-write.js';
import { customerTerm } from './story-terms.js';

/**
 * KEYS: the story list, its summary hash, the shard's story index, then the term sets the summary
 * names. ARGV: conversation id, dry run ('1'/'0'). Returns how many entries go (story entries,
 * the summary, index memberships). The hourly stats buckets hold counts only, nothing of the
 * conversation, and stay.
 */
const FORGET_STORY_LUA = `
local n = redis.call('LLEN', KEYS[1]) + redis.call('EXISTS', KEYS[2])
for i = 3, #KEYS do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then n = n + 1 end
end
if ARGV[2] == '1' then return n end
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
redis.call('DEL', KEYS[1], KEYS[2])
return n
`;
const forgetStoryScript = defineRedisScript<number>('ForgetStory', 'any', FORGET_STORY_LUA);

/** Erases a conversation's story, its summary and every index entry of it; returns what went (or would). */
export async function forgetStory(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
  dryRun: boolean,
): Promise<number> {
  const meta = keys.storyMeta(conversationId);
  const terms = ((await redis.hget(meta, META_FIELDS.terms)) ?? '').split('\n').filter((key) => key !== '');
  return forgetStoryScript(
    redis,
    [keys.story(conversationId), meta, keys.storyIndex, ...terms],
    [conversationId, dryRun ? '1' : '0'],
  );
}

/**
 * The conversations whose story says the customer wrote this phone number or e-mail address
 * (forget --customer): the index's term, confirmed on what the summary kept as written.
 */
export async function storiesOfCustomer(
  redis: RedisClient,
  keys: BridgeKeys,
  customer: Customer,
): Promise<string[]> {
  const found: string[] = [];
  for (const id of await redis.zrange(keys.storyTerm(customerTerm(customer)), 0, -1)) {
    const meta = await redis.hgetall(keys.storyMeta(id));
    const written = Object.entries(meta)
      .filter(([field]) => field.startsWith(META_FIELDS.phone) || field.startsWith(META_FIELDS.email))
      .map(([, value]) => value);
    if (meta[META_FIELDS.id] === id && written.some((text) => customerIn(text, customer))) found.push(id);
  }
  return found;
}
