import { UnrecoverableError } from 'bullmq';
import { executeActions } from '../exactly-once/execute-actions.js';
import type { ActionObserver, RunSubject } from '../exactly-once/execution-context.js';
import type { ActionReport, PlannedAction } from '../ports.js';
import type { ProcessorPorts } from './processor-deps.js';

export type { RunSubject } from '../exactly-once/execution-context.js';

/**
 * Runs planned actions for an event or a timer through the ledger (exactly-once/execute-actions.ts), collecting
 * each report into `collected` as it happens (so a failure policy sees what was done before the
 * run stopped). Actions the platform refused for good make the run fail as unrecoverable, so the
 * job is dead-lettered with them named.
 */
export async function runPlannedActions(
  deps: ProcessorPorts,
  subject: RunSubject,
  actions: readonly PlannedAction[],
  collected: ActionReport[],
): Promise<ActionReport[]> {
  const observe: ActionObserver = {
    onAction: (report) => {
      collected.push(report);
      deps.observe.onAction?.(report);
    },
    ...(deps.observe.onWindowBlocked ? { onWindowBlocked: deps.observe.onWindowBlocked } : {}),
  };
  const reports = await executeActions(actions, {
    actions: deps.actions,
    clock: deps.clock,
    observe,
    run: subject,
  });
  const failed = reports.filter((r) => r.state === 'failed');
  if (failed.length > 0) {
    throw new UnrecoverableError(
      `the platform refused ${failed.length} action(s): ${failed.map((f) => `${f.id} (${f.detail ?? 'failed'})`).join('; ')}`,
    );
  }
  return reports;
}
