import type { Queue } from 'bullmq';
import { z } from 'zod';
import { BusinessIdSchema } from '../../events/business-id.js';
import { jobBusinessField, jobNameOf } from '../../events/business-naming.js';
import {
  type ConversationEvent,
  ConversationEventSchema,
  EVENT_KINDS,
} from '../../events/conversation-event.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import { burstDueAt, messageTime } from '../../rules/burst.js';
import type { BurstRule } from './burst-store.js';

/**
 * The delayed job of a burst, in the shard's `timers` queue beside the timers: added
 * by the run of the message that begins the burst, due `debounce` after it. When it comes due it
 * lets the conversation's earlier events run, then claims the burst (bursts/burst-store.ts); if
 * a message extended the burst it sleeps until the new due time, otherwise it evaluates the rule
 * and runs the actions (processor/process-burst.ts).
 */
export const BurstJobDataSchema = z.object({
  kind: z.literal('burst'),
  burstId: z.string().min(1),
  /** The business whose rule it is when the bridge serves several; absent otherwise. */
  business: BusinessIdSchema.optional(),
  conversationId: z.string(),
  rule: z.string(),
  /** The rule's settings when the burst began (a reload does not change an open burst). */
  debounceMs: z.number().int().positive(),
  maxWaitMs: z.number().int().positive(),
  unless: z.array(z.enum(EVENT_KINDS)),
  /** The message that began it (for timers list, dead letters and forget; the rule reads the burst). */
  event: ConversationEventSchema,
  /** Arrival counter when it first came due: events that arrived before it are handled first. */
  cut: z.number().optional(),
  firstFiredAt: z.number().optional(),
  replay: z.number().int().optional(),
});
export type BurstJobData = z.infer<typeof BurstJobDataSchema>;

/** True for the data of a burst's job (the timers queue holds timers too). */
export function isBurstJobData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'burst';
}

/**
 * Adds the jobs of the bursts a customer message began (one round trip per burst begun, none for a
 * message that joins one). The job id is the burst id: adding it again (a run repeated after a
 * crash) does nothing.
 */
export async function scheduleBursts(
  queue: Queue,
  keys: BridgeKeys,
  event: ConversationEvent,
  started: readonly { rule: string; burstId: string }[],
  rules: readonly BurstRule[],
  now = Date.now(),
): Promise<void> {
  for (const { rule, burstId } of started) {
    const settings = rules.find((r) => r.rule === rule)?.settings;
    if (!settings) continue;
    const at = messageTime(event);
    const data: BurstJobData = {
      kind: 'burst',
      burstId,
      ...jobBusinessField(keys.naming),
      conversationId: event.conversationId ?? '',
      rule,
      debounceMs: settings.debounceMs,
      maxWaitMs: settings.maxWaitMs,
      unless: [...settings.unless],
      event,
    };
    const delay = Math.max(0, burstDueAt(settings, at, at) - now);
    await queue.add(jobNameOf('burst', keys.naming), data, { jobId: burstId, delay });
  }
}
