import type { EventKind } from '../../events/conversation-event.js';

/**
 * Event names of both interface forms and the older docs (messaging-service-interface.md "Events",
 * webhook-payloads.md §2). Matched case-insensitively; anything else is `unknown`.
 */
const KIND_BY_NAME: ReadonlyMap<string, EventKind> = new Map<string, EventKind>([
  ['channel.message_in', 'message_in'],
  ['user.message_in', 'message_in'],
  ['message.incoming', 'message_in'],
  ['ai.message_generated', 'ai_reply'],
  ['agent.message_out', 'agent_reply'],
  ['message.sent', 'message_sent'],
  ['conversation.assigned', 'assigned'],
  // The AI's hand-over, on the agent's separate hand-over address (interface, "Events"; the
  // emulator's reading of its payload, docs/emulator.md). Point that address at the receiver too.
  ['conversation.handover', 'assigned'],
  ['test', 'test'],
]);

export function eventKindOf(eventName: string): EventKind {
  return KIND_BY_NAME.get(eventName.trim().toLowerCase()) ?? 'unknown';
}

/** Kinds that are about one conversation and so cannot be understood without its id. */
export function needsConversation(kind: EventKind): boolean {
  return kind !== 'test' && kind !== 'unknown';
}
