import { tagOfJob } from '../../events/business-naming.js';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { burstDueAt, messageTime } from '../../rules/burst.js';
import { formatLocal } from '../../rules/business-time.js';
import { BurstJobDataSchema } from './burst-job.js';
import { burstField, parseBurstRegistration, parseStoredBurst } from './burst-store.js';

/** A burst as one of the conversation clocks (timers/list-timers.ts's TimerView). */
export interface BurstTimerView {
  timerId: string;
  rule: string;
  trigger: 'burst';
  clock: 'wall';
  dueAt: string;
  dueLocal: string | null;
  state: string;
}

/**
 * An open burst as `timers list` and the inbox page show it: when it is due (quiet for
 * the debounce since its last message, at most max_wait after its first), how many messages it
 * holds so far and what cancels it; `firing` once its job took it, `cancelled` once it is gone.
 * Undefined for a job that is not a burst of these keys (and conversation, when one is asked for).
 */
export async function burstTimerView(
  redis: RedisClient,
  keys: BridgeKeys,
  raw: unknown,
  options: { config?: { timezone: string }; conversationId?: string },
): Promise<
  { conversationId: string; channel: ConversationEvent['channel']; view: BurstTimerView } | undefined
> {
  const parsed = BurstJobDataSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const data = parsed.data;
  if (tagOfJob(data.business) !== keys.naming.tag) return undefined;
  if (options.conversationId !== undefined && data.conversationId !== options.conversationId)
    return undefined;
  const registration = parseBurstRegistration(
    await redis.hget(keys.conversation(data.conversationId), burstField(data.rule)),
  );
  let first = messageTime(data.event);
  let last = first;
  let state: string;
  if (registration?.state === 'pending' && registration.stored.id === data.burstId) {
    first = registration.stored.f;
    last = registration.stored.l;
    const unless = registration.unless.length > 0 ? `, cancelled by ${registration.unless.join(' or ')}` : '';
    state = `collecting ${registration.burst.count} message(s)${unless}`;
  } else {
    const taken = await redis.hget(keys.run(data.burstId), 'burst');
    const stored = taken === null ? undefined : parseStoredBurst(taken)?.stored;
    if (stored) {
      first = stored.f;
      last = stored.l;
    }
    state = taken === null ? 'cancelled' : `firing (${stored?.n ?? '?'} message(s))`;
  }
  const due = new Date(burstDueAt(data, first, last));
  return {
    conversationId: data.conversationId,
    channel: data.event.channel,
    view: {
      timerId: data.burstId,
      rule: data.rule,
      trigger: 'burst',
      clock: 'wall',
      dueAt: due.toISOString(),
      dueLocal: options.config ? formatLocal(due, options.config.timezone) : null,
      state,
    },
  };
}
