import type { ConversationEvent } from '../events/conversation-event.js';

/**
 * What a forward POSTs (docs/rules.md, "Forward to a CRM"): the envelope, which names the rule and
 * action and holds nothing of the customer, and the event.
 */
export interface ForwardBody {
  type: 'convo_bridge.event';
  rule: string;
  action: string;
  event: ConversationEvent;
  /** The conversation's tags: business labels, sent with the envelope whatever `fields` says. */
  tags?: string[];
}

/** A forward as a destination with `fields` receives it: the envelope, and the event's named fields. */
export type SentForwardBody = Omit<ForwardBody, 'event'> & { event: Partial<ConversationEvent> };

/**
 * The body a destination gets (`destinations.NAME.fields`): the whole event when it
 * names no fields (null), else the envelope and only those fields of the event, so that a CRM that
 * needs no text gets none. A field the event lacks is left out rather than sent as null. Pure.
 */
export function selectForwardFields(
  body: ForwardBody,
  fields: readonly (keyof ConversationEvent)[] | null,
): SentForwardBody {
  if (fields === null) return body;
  const event: Partial<Record<keyof ConversationEvent, unknown>> = {};
  for (const field of fields) {
    if (body.event[field] !== undefined) event[field] = body.event[field];
  }
  return {
    type: body.type,
    rule: body.rule,
    action: body.action,
    ...(body.tags !== undefined ? { tags: body.tags } : {}),
    event: event as Partial<ConversationEvent>,
  };
}
