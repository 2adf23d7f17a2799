import { timerIds } from '../../support/event-runs.js';
import {
  compareConversation,
  compareForwards,
  emptyTally,
  expectConversation,
  type ForwardTally,
  type SentMessage,
  type Tally,
} from './expectations.js';
import type { FaultWorld } from './fault-world.js';
import { byConversation, mapLimit } from './traffic.js';

export interface ActionCheck {
  tally: Tally;
  forwards: ForwardTally;
  deadLetters: number;
  /** Why (a few of) the dead letters were made. */
  deadLetterReasons: string[];
}

/**
 * Reads what actually happened (the platform's conversations through the admin API, the CRM
 * sink's forwards, the bridge's timer registrations in Redis) and compares it with what the rules
 * must have done for `sent`.
 */
export async function verifyActions(
  world: FaultWorld,
  sent: readonly SentMessage[],
  hours: 'open' | 'closed',
  conversationIds?: readonly string[],
): Promise<ActionCheck> {
  const groups = byConversation(sent);
  const ids = conversationIds ?? [...groups.keys()];
  const tally = emptyTally();
  const expectedForwardIds: string[] = [];
  await mapLimit(ids, 8, async (id) => {
    const expected = expectConversation(groups.get(id) ?? [], hours);
    expectedForwardIds.push(...expected.forwardIds);
    const [detail, timers] = await Promise.all([
      world.admin.conversation(id),
      timerIds(world.redis, world.keys, id).then((t) => t.length),
    ]);
    compareConversation(tally, id, expected, {
      messages: detail.messages,
      needHuman: detail.needHuman,
      timers,
    });
  });
  const wanted = new Set(ids);
  const forwards = compareForwards(
    expectedForwardIds,
    world.crm.requests.filter((r) => {
      const conversationId = (JSON.parse(r.body) as { event?: { conversationId?: string } }).event
        ?.conversationId;
      return conversationId !== undefined && wanted.has(conversationId);
    }),
  );
  const deadLetters = await world.deadLetters();
  const deadLetterReasons = deadLetters > 0 ? await world.deadLetterReasons() : [];
  return { tally, forwards, deadLetters, deadLetterReasons };
}

/** Problems of an action check, for a scenario's failure list. */
export function actionProblems(check: ActionCheck, options: { resentAllowed: boolean }): string[] {
  const problems = [...check.tally.problems];
  const f = check.forwards;
  if (f.missing > 0) problems.push(`${f.missing} CRM forward(s) missing`);
  if (f.unknown > 0) problems.push(`${f.unknown} CRM forward(s) with an unexpected webhook-id`);
  if (f.unsigned > 0) problems.push(`${f.unsigned} CRM forward(s) failed signature verification`);
  if (!options.resentAllowed && f.resent > 0) problems.push(`${f.resent} CRM forward(s) sent twice`);
  if (check.deadLetters > 0) {
    problems.push(`${check.deadLetters} dead letter(s): ${check.deadLetterReasons.join(' | ')}`);
  }
  return problems;
}

export function actionFigures(check: ActionCheck): Record<string, string | number> {
  const t = check.tally;
  const f = check.forwards;
  return {
    'notes/expected': `${t.notes}/${t.expectedNotes}`,
    'replies/expected': `${t.replies}/${t.expectedReplies}`,
    'marked need-human': `${t.needHumanMarked}/${t.expectedNeedHuman} conversations`,
    'timers set': `${t.timers}/${t.expectedTimers}`,
    'CRM forward ids': `${f.distinct}/${f.expected} (${f.total} requests)`,
    'missing/repeated/out of order': `${t.missing + f.missing}/${t.repeated}/${t.outOfOrder}`,
    'dead letters': check.deadLetters,
  };
}
