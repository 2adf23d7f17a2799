import type { ConversationEvent } from '../events/conversation-event.js';
import { ConversationEventSchema } from '../events/conversation-event.js';
import { normalizeEvent } from '../receive/normalize/normalize-event.js';
import type { ConversationFacts } from '../rules/plan.js';
import { describeZodIssues, factsFromJson, looksRecorded, RecordedEventSchema } from './recorded-event.js';

/** What an event input resolves to; facts and now only when a recorded line carried them. */
export interface ResolvedEventInput {
  event: ConversationEvent;
  /**
   * Which shape it was: a webhook body's `receivedAt` is the instant given to resolve it, not one of
   * its own (bursts group messages by their times: explain).
   */
  source?: 'webhook' | 'event' | 'recorded';
  facts?: ConversationFacts;
  now?: Date;
}

export type EventInputResult = { ok: true; value: ResolvedEventInput } | { ok: false; message: string };

/**
 * The three shapes every command that evaluates rules accepts for an event: a webhook
 * body exactly as the platform sends it (normalised the way the receiver does), a canonical
 * ConversationEvent (`v: 1` and `kind`), or a recorded line (`{v, now, event, facts, plan}`, as
 * `convo-bridge events export` writes), whose facts and `now` come with it. Pure.
 */
export function resolveEventInput(value: unknown, where: string, receivedAt: Date): EventInputResult {
  if (looksRecorded(value)) {
    const parsed = RecordedEventSchema.safeParse(value);
    if (!parsed.success) {
      return {
        ok: false,
        message: `${where} is not a recorded event line:\n${describeZodIssues(where, parsed.error)}`,
      };
    }
    const line = parsed.data;
    return {
      ok: true,
      value: {
        event: line.event,
        facts: factsFromJson(line.facts),
        now: new Date(line.now),
        source: 'recorded',
      },
    };
  }
  const looksCanonical = typeof value === 'object' && value !== null && 'v' in value && 'kind' in value;
  if (!looksCanonical) {
    const normalized = normalizeEvent(value, { receivedAt });
    if (normalized.ok && normalized.unreadableTime !== undefined) {
      const { field, text } = normalized.unreadableTime;
      return {
        ok: false,
        message: `${where}: ${field}: ${JSON.stringify(text)} is not a time: write ISO-8601 with a zone (2026-11-23T03:15:00Z), Unix seconds or milliseconds, or WIB "2026-11-23 10:15:00"; or leave it out to use the time of evaluation`,
      };
    }
    if (normalized.ok) return { ok: true, value: { event: normalized.event, source: 'webhook' } };
    return {
      ok: false,
      message:
        `${where} is neither a webhook body the receiver understands (${normalized.problem.message}), ` +
        'a canonical ConversationEvent (see src/events/conversation-event.ts) nor a recorded line ' +
        '(convo-bridge events export)',
    };
  }
  const parsed = ConversationEventSchema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      message: `${where} is not a canonical ConversationEvent:\n${describeZodIssues(where, parsed.error)}\n(see src/events/conversation-event.ts for the fields)`,
    };
  }
  return { ok: true, value: { event: parsed.data, source: 'event' } };
}
