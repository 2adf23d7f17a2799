import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import { z } from 'zod';
import { BusinessIdSchema } from '../../events/business-id.js';
import { jobBusinessField, jobNameOf } from '../../events/business-naming.js';
import { ConversationEventSchema, EVENT_KINDS } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';
import { STORY_ALONE_LUA, type StoryScriptInput } from '../../story/story-lua.js';
import { CONVERSATION_FIELDS, TIMER_REGISTRATION } from '../conversation-facts.js';
import type { PlannedAction, TimerScheduler } from '../ports.js';
import { DEFAULT_STORE_TTLS } from '../store-ttls.js';

/**
 * `after: 15m, unless: agent_reply, then: [...]` timers. Each is a delayed BullMQ job in the
 * `timers` queue plus a registration in the conversation hash (field `T:<timer id>`, value
 * `p:<kinds>` while pending):
 *   pending (with the kinds that cancel it) --event of such a kind--> deleted (cancelled)
 *   pending --fires--> firing --actions done--> deleted
 * Cancel and fire claim the registration atomically, so a timer either fires or is cancelled,
 * never both. A re-run of a timer that crashed while firing finds `firing` and carries on.
 */
export const TimerJobDataSchema = z.object({
  timerId: z.string(),
  /** The business that set it when the bridge serves several; absent otherwise. */
  business: BusinessIdSchema.optional(),
  conversationId: z.string(),
  rule: z.string(),
  unless: z.array(z.enum(EVENT_KINDS)),
  /** Actions already rendered when the timer was set; validated loosely, produced by our own evaluator. */
  actions: z.array(z.custom<PlannedAction>((value) => typeof value === 'object' && value !== null)),
  event: ConversationEventSchema,
  dueAt: z.string(),
  /** The due time in the config's zone (business-time and window_closing timers), for people. */
  dueLocal: z.string().optional(),
  /** `business`: the delay counted open business hours only. */
  clock: z.enum(['wall', 'business']).optional(),
  /** What set it: absent for `after:` timers, `window_closing` for those rules. */
  trigger: z.literal('window_closing').optional(),
  /** Arrival counter when it first fired: events that arrived before it are handled first. */
  cut: z.number().optional(),
  firstFiredAt: z.number().optional(),
  replay: z.number().int().optional(),
});
export type TimerJobData = z.infer<typeof TimerJobDataSchema>;

export function timerIdFor(scope: string, actionId: string): string {
  return `tm-${createHash('sha256').update(`${scope}|${actionId}`).digest('hex').slice(0, 40)}`;
}

const REGISTRATION_TTL_MARGIN_MS = 24 * 3600 * 1000;

/**
 * Registers a timer in its conversation hash and makes the hash live past the timer's due time
 * (never shortening a longer expiry another pending timer gave it, which would drop that
 * timer's registration before it fires). A resumed run only
 * keeps a registration that is there: none means the timer has fired or was cancelled since.
 * KEYS: conversation hash. ARGV: timer field, pending value, ttl ms, '1' for a resumed run.
 * Returns 'ok', or 'gone' for a resumed run that found no registration.
 */
const REGISTER_LUA = `
if ARGV[4] == '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 'gone' end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 'ok'
`;
const registerScript = defineRedisScript<string>('TimerRegister', 1, REGISTER_LUA);

// KEYS: conversation hash. ARGV: timer field. Returns 'go' (claimed or re-run) or 'cancelled'.
const CLAIM_LUA = `
local state = redis.call('HGET', KEYS[1], ARGV[1])
if not state then return 'cancelled' end
if string.sub(state, 1, ${TIMER_REGISTRATION.pending.length}) == '${TIMER_REGISTRATION.pending}' then redis.call('HSET', KEYS[1], ARGV[1], '${TIMER_REGISTRATION.firing}') end
return 'go'
`;
const claimScript = defineRedisScript<string>('TimerClaim', 1, CLAIM_LUA);

export function createTimerScheduler(
  redis: RedisClient,
  keys: BridgeKeys,
  queue: Queue,
  now: () => Date = () => new Date(),
  /** The conversation hash's expiry (`retention.conversations`); a registration extends it past the due time. */
  conversationSeconds: number = DEFAULT_STORE_TTLS.conversationSeconds,
): TimerScheduler {
  return {
    idFor: timerIdFor,
    async schedule(input) {
      const key = keys.conversation(input.conversationId);
      // A due time fixed by the plan (business time, window_closing) stays fixed when a run is
      // retried later; otherwise the delay counts from now.
      const at = now().getTime();
      const dueAt = input.dueAt !== undefined ? Date.parse(input.dueAt) : at + input.delayMs;
      const delayMs = Math.max(0, dueAt - at);
      // Register first: a crash before the job is added leaves a harmless registration (it expires
      // with the conversation hash, which lives at least as long as the timer).
      const registered = await registerScript(
        redis,
        [key],
        [
          timerField(input.timerId),
          `${TIMER_REGISTRATION.pending}${input.unless.join(',')}`,
          Math.max(delayMs + REGISTRATION_TTL_MARGIN_MS, conversationSeconds * 1000),
          input.resumed ? '1' : '0',
        ],
      );
      if (registered === 'gone') return 'gone';
      await input.onRegistered?.();
      const data: TimerJobData = {
        timerId: input.timerId,
        ...jobBusinessField(keys.naming),
        conversationId: input.conversationId,
        rule: input.rule,
        unless: input.unless.filter((k): k is TimerJobData['unless'][number] =>
          (EVENT_KINDS as readonly string[]).includes(k),
        ),
        actions: input.actions,
        event: input.event,
        dueAt: new Date(dueAt).toISOString(),
        ...(input.dueLocal !== undefined ? { dueLocal: input.dueLocal } : {}),
        ...(input.clock !== undefined ? { clock: input.clock } : {}),
        ...(input.trigger !== undefined ? { trigger: input.trigger } : {}),
      };
      // The job id is the timer's: adding it again while the job exists (a resumed run) is a no-op.
      await queue.add(jobNameOf('timer', keys.naming), data, { jobId: input.timerId, delay: delayMs });
      return 'scheduled';
    },
  };
}

/**
 * Removes the delayed jobs of timers an event cancelled (their registrations were already deleted
 * atomically by processor/prepare-run.ts, so even if a removal fails the timer finds itself cancelled).
 */
export async function removeTimerJobs(queue: Queue, timerIds: readonly string[]): Promise<void> {
  for (const timerId of timerIds) await queue.remove(timerId).catch(() => 0);
}

export async function claimTimer(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
  timerId: string,
): Promise<'go' | 'cancelled'> {
  const state = await claimScript(redis, [keys.conversation(conversationId)], [timerField(timerId)]);
  return state === 'go' ? 'go' : 'cancelled';
}

/**
 * A fired (or dead-lettered) timer is done: its registration goes, and its run state with it, or,
 * for a dead letter, is kept `keepRunSeconds` for a replay (0: deleted).
 */
export async function releaseTimer(
  redis: RedisClient,
  keys: BridgeKeys,
  conversationId: string,
  timerId: string,
  keepRunSeconds = 0,
  story?: StoryScriptInput,
) {
  const multi = redis.multi().hdel(keys.conversation(conversationId), timerField(timerId));
  if (keepRunSeconds > 0) multi.expire(keys.run(timerId), keepRunSeconds);
  else multi.del(keys.run(timerId));
  // The story of a fired timer goes with the same transaction (same slot: the conversation's).
  if (story && story.keys.length > 0)
    multi.eval(STORY_ALONE_LUA, story.keys.length, ...story.keys, ...story.args);
  await multi.exec();
}

export function timerField(timerId: string): string {
  return `${CONVERSATION_FIELDS.timer}${timerId}`;
}

// KEYS: conversation hash. ARGV: timer field. Deletes a pending registration: 'cancelled'; a timer
// already firing keeps it: 'firing'; none: 'gone' (fired or cancelled before).
const CANCEL_LUA = `
local state = redis.call('HGET', KEYS[1], ARGV[1])
if not state then return 'gone' end
if string.sub(state, 1, ${TIMER_REGISTRATION.pending.length}) ~= '${TIMER_REGISTRATION.pending}' then return 'firing' end
redis.call('HDEL', KEYS[1], ARGV[1])
return 'cancelled'
`;
const cancelScript = defineRedisScript<string>('TimerCancel', 1, CANCEL_LUA);

/**
 * Cancels a pending timer by hand (the operator API): its registration goes atomically, as an
 * event of an `unless` kind takes it (a timer either fires or is cancelled, never both), then its
 * delayed job. A timer already firing is left to finish.
 */
export async function cancelTimer(
  redis: RedisClient,
  keys: BridgeKeys,
  queue: Queue,
  conversationId: string,
  timerId: string,
): Promise<'cancelled' | 'firing' | 'gone'> {
  const outcome = await cancelScript(redis, [keys.conversation(conversationId)], [timerField(timerId)]);
  if (outcome === 'cancelled' || outcome === 'gone') await removeTimerJobs(queue, [timerId]);
  return outcome === 'cancelled' || outcome === 'firing' ? outcome : 'gone';
}
