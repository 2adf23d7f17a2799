import { z } from 'zod';
import { ConversationEventSchema } from '../events/conversation-event.js';

/** What one job of the `events` queue carries. Validated again when a worker takes it. */
export const EventJobDataSchema = z.object({
  /** Position in the receiver's arrival order (per-conversation ordering uses it). */
  arrival: z.number().int().positive(),
  event: ConversationEventSchema,
  /** Set when replayed from the dead-letter set: actions that failed for good are tried again. */
  replay: z.number().int().positive().optional(),
});
export type EventJobData = z.infer<typeof EventJobDataSchema>;
