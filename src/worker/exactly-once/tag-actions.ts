import { CONVERSATION_FIELDS, type StoredFacts } from '../conversation-facts.js';

/**
 * Tag and untag actions (performed by action-life.ts): no platform call. The tags are fields of the conversation
 * hash (`G:<tag>` = ms when it expires, '0' for never), staged with the run's state and written
 * by the run's next write: with the ledger entry that says the action is done (a commit before a
 * later note or reply), or when the event leaves its order (processor/order-gate.ts LEAVE_LUA),
 * in the same call as once-marks and cooldowns; a fired timer writes them with its own state.
 * Repeating one is harmless (the plan fixes the expiry of an event's tags), so they need no
 * `started` entry. The run's facts are updated in memory, so a forward later in the same run
 * carries them.
 */

export function tagField(name: string): string {
  return `${CONVERSATION_FIELDS.tag}${name}`;
}

/** Tag fields that have expired by `nowMs` (an event's finish step deletes them with its write). */
export function expiredTagFields(facts: StoredFacts, nowMs: number): string[] {
  return Object.entries(facts.tags)
    .filter(([, until]) => until !== null && until <= nowMs)
    .map(([name]) => tagField(name));
}
