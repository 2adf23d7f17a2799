import { UnrecoverableError } from 'bullmq';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { RunLogger } from '../../observe/logger.js';
import type { StoredFacts } from '../conversation-facts.js';
import type { RunState } from '../exactly-once/execute-actions.js';
import { executeActions } from '../exactly-once/execute-actions.js';
import type { ActionReport, PlannedAction, RulesPort } from '../ports.js';
import { timerIdFor } from '../timers/timers.js';
import type { EventProcessorDeps } from './processor-deps.js';

/** What one run acts for: an event, or a fired timer (with the event that set it). */
export interface RunSubject {
  /** Ledger and idempotency scope: the event key, or the timer id. */
  scope: string;
  event: ConversationEvent;
  conversationId: string;
  facts: StoredFacts;
  rules: RulesPort;
  replay: boolean;
  state: RunState;
  log: RunLogger;
}

/**
 * Runs planned actions for an event or a timer through the ledger (exactly-once/execute-actions.ts), collecting
 * each report into `collected` as it happens (so a failure policy sees what was done before the
 * run stopped). Actions the platform refused for good make the run fail as unrecoverable, so the
 * job is dead-lettered with them named.
 */
export async function runPlannedActions(
  deps: EventProcessorDeps,
  subject: RunSubject,
  actions: readonly PlannedAction[],
  collected: ActionReport[],
): Promise<ActionReport[]> {
  const reports = await executeActions(actions, {
    keys: deps.keys,
    state: subject.state,
    scope: subject.scope,
    event: subject.event,
    conversationId: subject.conversationId,
    facts: subject.facts,
    platform: deps.platform,
    classifyPlatformError: deps.classifyPlatformError,
    forwarder: deps.forwarder,
    rules: subject.rules,
    timers: deps.timers,
    timerIdFor,
    now: deps.now,
    safetyMarginMs: deps.settings.safetyMarginMs,
    reconcileSkewMs: deps.settings.reconcileSkewMs,
    replay: subject.replay,
    log: subject.log,
    onAction: (report) => {
      collected.push(report);
      deps.onAction?.(report);
    },
    ...(deps.onWindowBlocked ? { onWindowBlocked: deps.onWindowBlocked } : {}),
  });
  const failed = reports.filter((r) => r.state === 'failed');
  if (failed.length > 0) {
    throw new UnrecoverableError(
      `the platform refused ${failed.length} action(s): ${failed.map((f) => `${f.id} (${f.detail ?? 'failed'})`).join('; ')}`,
    );
  }
  return reports;
}
