import type { DeadLetter } from '../../src/worker/failures/dead-letters.js';

/** A dead letter as the worker writes one, for the operator commands to list (`overrides` first). */
export function deadLetterFixture(
  id: string,
  conversationId: string,
  overrides: Partial<DeadLetter> = {},
): DeadLetter {
  return {
    id,
    queue: 'events',
    jobId: `job-${id}`,
    jobName: 'event',
    reason: 'the platform refused 1 action(s)',
    code: 'UNRECOVERABLE',
    attempts: 1,
    failedAt: new Date().toISOString(),
    conversationId,
    eventKey: `channel.message_in|${id}`,
    data: {},
    actions: [],
    replays: 0,
    ...overrides,
  };
}
