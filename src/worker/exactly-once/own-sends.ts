import type { ConversationEvent } from '../../events/conversation-event.js';
import { CONVERSATION_FIELDS } from '../conversation-facts.js';
import { replyTextKey, sentIdField } from './sent-marks.js';

/**
 * Recognising the platform's reports of the bridge's own sends. Some platforms send an
 * `agent.message_out` (earlier form: `message.sent`) for messages posted through the API too; such
 * an echo must neither cancel `unless: agent_reply` timers nor run the rules meant for human agents
 * (a rule replying to it would answer itself forever). An event is an echo when its message id is
 * one the platform gave the bridge for a note or reply (`S:<id>` in the conversation hash, written
 * when the call returns), or its text is one the bridge began sending moments ago (`R:<hash>`,
 * written BEFORE the call, so an echo that overtakes the bridge's own bookkeeping is still known).
 *
 * No extra round trip: processor/prepare-run.ts already reads the conversation hash; the worker passes the
 * two field names to look for and the script reports whether either is there.
 */

/** Kinds a platform may use to report a message the bridge sent. */
export const ECHO_KINDS: ReadonlySet<string> = new Set(['agent_reply', 'message_sent']);

/**
 * The conversation-hash fields whose presence marks this event as the echo of one of our sends:
 * [message id field, reply text field], '' where there is nothing to look for (not an echo kind).
 * The text field is the mark sent-marks.ts writes for a text reply (`sentTextKey`).
 */
export function echoProbe(event: ConversationEvent): [string, string] {
  if (!ECHO_KINDS.has(event.kind)) return ['', ''];
  const id = event.messageId ? sentIdField(event.messageId) : '';
  const text = event.text === '' ? '' : `${CONVERSATION_FIELDS.recent}${replyTextKey(event.text)}`;
  return [id, text];
}
