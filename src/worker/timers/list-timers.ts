import type { Queue } from 'bullmq';
import { tagOfJob } from '../../events/business-naming.js';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { formatLocal } from '../../rules/business-time.js';
import { replyWindow } from '../../rules/reply-window.js';
import type { ChannelConfig, ChannelKind } from '../../rules/rules-settings-schema.js';
import { isBurstJobData } from '../bursts/burst-job.js';
import { burstTimerView } from '../bursts/burst-view.js';
import { CONVERSATION_FIELDS, TIMER_REGISTRATION } from '../conversation-facts.js';
import { PENDING_STATES } from '../pending-jobs.js';
import { TimerJobDataSchema, timerField } from './timers.js';

/**
 * The conversation clocks an operator can see: per conversation, the
 * timers waiting in the `timers` queue (when each is due, what set it, whether it is still pending)
 * and when the reply window closes. Read-only, for `convo-bridge timers list` and the emulator's
 * inbox page; it walks the queue's pending jobs, so it is an operator's tool, not a hot path.
 */
export interface TimerView {
  timerId: string;
  rule: string;
  /** `window_closing`, `after` for a rule's `after:` timer, `burst` for a debounced rule's burst. */
  trigger: 'after' | 'window_closing' | 'burst';
  clock: 'wall' | 'business';
  /** ISO instant. */
  dueAt: string;
  /** The due time in the config's zone, when known. */
  dueLocal: string | null;
  /**
   * `pending` (with the event kinds that cancel it), `firing`, or `cancelled` (its job not yet
   * removed); a burst: `collecting N message(s)` (and what cancels it), `firing`, or `cancelled`.
   */
  state: string;
}

export interface ConversationClocks {
  conversationId: string;
  timers: TimerView[];
  /** ISO instant of the last customer message the bridge knows; null when none. */
  lastCustomerMessageAt: string | null;
  window: {
    channelKind: ChannelKind | null;
    applies: boolean;
    closesAt: string | null;
    closesLocal: string | null;
  };
}

export interface ClocksConfig {
  timezone: string;
  channels: readonly ChannelConfig[];
  replyWindow: { appliesTo: readonly ChannelKind[]; hours: number };
}

export async function listConversationClocks(
  redis: RedisClient,
  keys: BridgeKeys,
  timersQueue: Queue,
  options: { config?: ClocksConfig; conversationId?: string; now?: Date } = {},
): Promise<ConversationClocks[]> {
  const jobs = await timersQueue.getJobs([...PENDING_STATES]);
  const byConversation = new Map<string, { timers: TimerView[]; channel: ConversationEvent['channel'] }>();
  for (const job of jobs) {
    if (isBurstJobData(job?.data)) {
      const burst = await burstTimerView(redis, keys, job?.data, options);
      if (burst === undefined) continue;
      const entry = byConversation.get(burst.conversationId) ?? { timers: [], channel: burst.channel };
      byConversation.set(burst.conversationId, entry);
      entry.timers.push(burst.view);
      continue;
    }
    const parsed = TimerJobDataSchema.safeParse(job?.data);
    if (!parsed.success) continue;
    const data = parsed.data;
    // The timers queue is shared by every business: the timers of these keys' naming only.
    if (tagOfJob(data.business) !== keys.naming.tag) continue;
    if (options.conversationId !== undefined && data.conversationId !== options.conversationId) continue;
    const entry = byConversation.get(data.conversationId) ?? { timers: [], channel: data.event.channel };
    byConversation.set(data.conversationId, entry);
    const registration = await redis.hget(keys.conversation(data.conversationId), timerField(data.timerId));
    entry.timers.push({
      timerId: data.timerId,
      rule: data.rule,
      trigger: data.trigger ?? 'after',
      clock: data.clock ?? 'wall',
      dueAt: data.dueAt,
      dueLocal:
        data.dueLocal ?? (options.config ? formatLocal(new Date(data.dueAt), options.config.timezone) : null),
      state:
        registration === null
          ? 'cancelled'
          : registration.startsWith(TIMER_REGISTRATION.pending)
            ? `pending (cancelled by ${registration.slice(TIMER_REGISTRATION.pending.length) || 'nothing'})`
            : registration,
    });
    entry.channel = data.event.channel;
  }
  const now = options.now ?? new Date();
  const out: ConversationClocks[] = [];
  for (const [conversationId, entry] of byConversation) {
    const lastIn = await redis.hget(keys.conversation(conversationId), CONVERSATION_FIELDS.lastIn);
    const last = lastIn === null ? null : new Date(lastIn);
    let window: ConversationClocks['window'] = {
      channelKind: null,
      applies: false,
      closesAt: null,
      closesLocal: null,
    };
    if (options.config) {
      const state = replyWindow(options.config, entry.channel, last, now);
      window = {
        channelKind: state.channelKind,
        applies: state.applies,
        closesAt: state.closesAt,
        closesLocal: state.closesAt ? formatLocal(new Date(state.closesAt), options.config.timezone) : null,
      };
    }
    entry.timers.sort((a, b) => a.dueAt.localeCompare(b.dueAt));
    out.push({
      conversationId,
      timers: entry.timers,
      lastCustomerMessageAt: last?.toISOString() ?? null,
      window,
    });
  }
  return out.sort((a, b) => (a.timers[0]?.dueAt ?? '').localeCompare(b.timers[0]?.dueAt ?? ''));
}
