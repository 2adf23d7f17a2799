import { expiryOf, liveTags, sortedNames } from '../../rules/tags.js';
import { CONVERSATION_FIELDS, type StoredFacts } from '../conversation-facts.js';
import type { PlannedAction } from '../ports.js';
import type { ExecutionContext } from './execution-context.js';

/**
 * Tag and untag actions: no platform call. The tags are fields of the conversation
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

export function performTagAction(
  action: Extract<PlannedAction, { type: 'tag' | 'untag' }>,
  ctx: ExecutionContext,
): string {
  const { facts, state } = ctx.run;
  const tags = facts.tags;
  if (action.type === 'untag') {
    for (const name of action.tags) {
      delete tags[name];
      state.stageConversationRemoval(tagField(name));
    }
    return `untagged ${action.tags.join(', ')}`;
  }
  const until = expiryOf(action, ctx.clock.now().getTime());
  for (const name of action.tags) {
    tags[name] = until;
    state.stageConversation(tagField(name), until === null ? '0' : String(until));
  }
  return `tagged ${action.tags.join(', ')}${until === null ? '' : ` until ${new Date(until).toISOString()}`}`;
}

/** The tags a forward carries: as its plan fixed them, or those in force now (a timer's forward). */
export function forwardTags(action: Extract<PlannedAction, { type: 'forward' }>, ctx: ExecutionContext) {
  return action.tags ?? sortedNames(liveTags(ctx.run.facts.tags, ctx.clock.now().getTime()));
}

/** Tag fields that have expired by `nowMs` (an event's finish step deletes them with its write). */
export function expiredTagFields(facts: StoredFacts, nowMs: number): string[] {
  return Object.entries(facts.tags)
    .filter(([, until]) => until !== null && until <= nowMs)
    .map(([name]) => tagField(name));
}
