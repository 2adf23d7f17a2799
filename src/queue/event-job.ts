import { z } from 'zod';
import { BusinessIdSchema } from '../events/business-id.js';
import { ConversationEventSchema } from '../events/conversation-event.js';

/**
 * W3C Trace Context of one event: set by a receiver with tracing on, so the worker's
 * span of this event continues the trace of the webhook that brought it (one job carries events of
 * many webhooks, so the job's own context cannot). Optional, so jobs without it still parse; a
 * malformed one is dropped rather than failing the event (tracing must never cost an event).
 */
const TraceCarrierSchema = z
  .object({ traceparent: z.string().max(128), tracestate: z.string().max(512).optional() })
  .optional()
  .catch(undefined);

/** One event of a batch: its place in the receiver's arrival order, and the event. */
export const BatchedEventSchema = z.object({
  /** Position in the receiver's arrival order (per-conversation ordering uses it). */
  arrival: z.number().int().positive(),
  /**
   * The naming of the business whose webhook brought it (events/business-naming.ts): its id for a
   * business of its own naming; absent for the single-business naming (as earlier releases wrote).
   * One batch may hold several businesses' events; the worker runs each with its business's keys,
   * rules and platform credentials.
   */
  business: BusinessIdSchema.optional(),
  event: ConversationEventSchema,
  trace: TraceCarrierSchema,
});
export type BatchedEvent = z.infer<typeof BatchedEventSchema>;

/**
 * What one job of the `events` queue carries: the events of one group commit of the receiver (one
 * or more, in arrival order; see queue/ingest-event.ts). Validated again when a worker takes it.
 */
export const EventBatchDataSchema = z.object({
  events: z.array(BatchedEventSchema).min(1),
  /** Set when replayed from the dead-letter set: actions that failed for good are tried again. */
  replay: z.number().int().positive().optional(),
  /**
   * Results of the events an earlier attempt finished (kept when the job parks or retries, so the
   * job's return value reports every event of the batch). Written by the worker, read back as is.
   */
  finished: z.array(z.unknown()).optional(),
  /**
   * Failed runs per event key: each event of a batch has its own attempts (`worker.attempts`),
   * whatever happens to its neighbours. Written by the worker when the job retries.
   */
  failures: z.record(z.string(), z.number().int().nonnegative()).optional(),
});
export type EventBatchData = z.infer<typeof EventBatchDataSchema>;

/** The name of every events-queue job (bull-board shows it). */
export const EVENT_BATCH_JOB_NAME = 'events';

/** A batch's name as bull-board shows it: `events`, or `events:<its businesses>` (at most 3 named). */
export function batchJobName(businesses: ReadonlySet<string>): string {
  if (businesses.size === 0) return EVENT_BATCH_JOB_NAME;
  const names = [...businesses].sort();
  const shown = names.slice(0, 3).join(',');
  return `${EVENT_BATCH_JOB_NAME}:${shown}${names.length > 3 ? `,+${names.length - 3}` : ''}`;
}
