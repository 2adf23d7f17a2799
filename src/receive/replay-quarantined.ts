import type { ConversationEvent } from '../events/conversation-event.js';
import type { IngestResult } from '../queue/ingest-event.js';
import { normalizeEvent } from './normalize/normalize-event.js';
import { getQuarantined, type QuarantineStore, removeQuarantined } from './quarantine-store.js';
import { ReceiverError } from './receiver-errors.js';

export type ReplayResult =
  | { outcome: 'queued' | 'duplicate'; event: ConversationEvent; ingest: IngestResult }
  /** A test ping has nothing to queue; the entry is removed. */
  | { outcome: 'ignored'; event: ConversationEvent };

export interface ReplayDeps {
  store: QuarantineStore;
  ingest(event: ConversationEvent): Promise<IngestResult>;
}

/**
 * Normalises a quarantined body again (with this version's normaliser, e.g. after an upgrade that
 * knows a new event name) and stores the event through the same exactly-once ingest as a live
 * webhook, with its original receive time. The entry is removed only once the event is stored.
 * Throws QUARANTINE_NOT_FOUND, or QUARANTINE_NOT_REPLAYABLE (the entry stays) when the body still
 * cannot be understood or was stored truncated.
 */
export async function replayQuarantined(deps: ReplayDeps, id: string): Promise<ReplayResult> {
  const entry = await getQuarantined(deps.store, id);
  if (entry.truncated) {
    throw new ReceiverError(
      `quarantine entry ${id} cannot be replayed: its body (${entry.bodyBytes} bytes) was stored truncated; ` +
        'raise receiver.quarantineBodyBytes for future entries and ask the platform to resend this one',
      { code: 'QUARANTINE_NOT_REPLAYABLE' },
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(entry.body.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ReceiverError(`quarantine entry ${id} cannot be replayed: its body is not valid JSON`, {
      code: 'QUARANTINE_NOT_REPLAYABLE',
      cause: error,
    });
  }
  const result = normalizeEvent(body, { receivedAt: new Date(entry.receivedAt) });
  if (!result.ok) {
    throw new ReceiverError(
      `quarantine entry ${id} still cannot be understood (${result.problem.reason}): ${result.problem.message}`,
      { code: 'QUARANTINE_NOT_REPLAYABLE' },
    );
  }
  const { event } = result;
  if (event.kind === 'unknown') {
    throw new ReceiverError(
      `quarantine entry ${id} still has an event name this version does not know ("${event.name}"); ` +
        'replay it after upgrading to a version that handles it',
      { code: 'QUARANTINE_NOT_REPLAYABLE' },
    );
  }
  if (event.kind === 'test') {
    await removeQuarantined(deps.store, id);
    return { outcome: 'ignored', event };
  }
  const ingest = await deps.ingest(event);
  await removeQuarantined(deps.store, id);
  return { outcome: ingest.outcome, event, ingest };
}
