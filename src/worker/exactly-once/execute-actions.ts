import { ActionInterrupted } from '../failures/action-interrupted.js';
import { classifyFailure } from '../failures/classify-failure.js';
import type { ActionReport, HistoryMessage, PlannedAction } from '../ports.js';
import { begin, decide, finish, type LedgerEntry } from './action-ledger.js';
import type { ExecutionContext } from './execution-context.js';
import { perform, replySkipReason } from './perform-action.js';
import { reconcileAgainstHistory } from './reconcile-action.js';
import { beginSend, markOnce, markSent, rememberSentId, sentTextKey } from './sent-marks.js';

/**
 * The exactly-once machinery's entry: the rest of the worker runs a plan's actions through
 * `executeActions` and reaches the run's state, the echo probe and the stale marks through here.
 *
 * One action, as `runOne` takes it: the ledger says what is left to do (action-ledger.ts); an
 * action of unknown outcome is looked for in the history first (reconcile-action.ts); a reply
 * the window or a once-mark holds back is skipped (perform-action.ts); a note or reply records
 * `started` durably, with what rules out a same-text message sent moments before (sent-marks.ts),
 * before its call; the call itself (perform-action.ts); then its state is staged (run-state.ts).
 */
export type { ExecutionContext } from './execution-context.js';
export { echoProbe } from './own-sends.js';
export { RunState } from './run-state.js';
export { staleSentMarks } from './sent-marks.js';

/**
 * Runs a plan's actions in order, each exactly once across retries, crashes and redeliveries,
 * by writing the ledger before and after every outside call (see action-ledger.ts).
 */
export async function executeActions(
  actions: readonly PlannedAction[],
  ctx: ExecutionContext,
): Promise<ActionReport[]> {
  const ledger = ctx.run.state.ledger;
  const reports: ActionReport[] = [];
  let history: HistoryMessage[] | undefined;
  /** The conversation's history, read once per run (or again when `fresh` is asked for). */
  const loadHistory = async (fresh = false) => {
    if (!history || fresh) {
      const read: HistoryMessage[] = [];
      for await (const message of ctx.actions.platform.history(ctx.run.conversationId)) read.push(message);
      history = read;
    }
    return history;
  };
  const run = async (list: readonly PlannedAction[]): Promise<void> => {
    for (const action of list) {
      const report = await runOne(action, ledger, ctx, loadHistory, run);
      reports.push(report);
      ctx.observe.onAction?.(report);
    }
  };
  await run(actions);
  return reports;
}

/**
 * Records an action's state after its call: staged, written with the run's next durable write or
 * its finish (see run-state.ts). Only `started` must be durable before a call (`state.commit`).
 */
function record(ctx: ExecutionContext, id: string, entry: LedgerEntry): void {
  ctx.run.state.stage(id, entry);
}

/**
 * Actions whose repetition does no harm: marking need-human (the platform treats a repeat as
 * success), a forward (it carries a stable `webhook-id` for the receiver to dedupe), a timer (its
 * job id is derived from the action, and it records `started` itself once registered, so that a
 * repeat after its job is done and gone adds nothing: perform-action.ts), a tag or untag (a field
 * of the conversation hash, written with the ledger entry that says it is done; tag-actions.ts).
 * They need no `started` record before the call: if a run dies mid-call, the next run simply does
 * them again. Notes and replies do need it (see action-ledger.ts).
 */
function isIdempotent(action: PlannedAction): boolean {
  return action.type !== 'note' && action.type !== 'reply';
}

function claimedMessageIds(ledger: Map<string, LedgerEntry>): Set<string> {
  const ids = new Set<string>();
  for (const entry of ledger.values()) {
    if (entry.state === 'done' && entry.detail?.startsWith('message ')) ids.add(entry.detail.slice(8));
  }
  return ids;
}

async function runOne(
  action: PlannedAction,
  ledger: Map<string, LedgerEntry>,
  ctx: ExecutionContext,
  loadHistory: (fresh?: boolean) => Promise<HistoryMessage[]>,
  runNested: (list: readonly PlannedAction[]) => Promise<void>,
): Promise<ActionReport> {
  const base = { id: action.id, type: action.type, rule: action.rule } as const;
  const previous = ledger.get(action.id);
  let decision = decide(previous);
  if (decision.kind === 'finished' && decision.state === 'failed' && ctx.run.replay)
    decision = { kind: 'run' };
  if (decision.kind === 'finished') {
    return withDetail({ ...base, state: decision.state }, previous?.detail);
  }

  // A timer left `started` is not looked for in history: its registration says (perform-action.ts).
  if (decision.kind === 'reconcile' && action.type !== 'timer') {
    const verdict = reconcileAgainstHistory(
      action,
      decision.startedAt,
      await loadHistory(),
      claimedMessageIds(ledger),
      ctx.clock.settings.reconcileSkewMs,
      decision.after,
      decision.chain,
    );
    if (verdict.kind === 'present') {
      const detail = verdict.messageId ? `message ${verdict.messageId}` : 'reconciled: found in history';
      if (action.type === 'reply' && action.once) markOnce(ctx, action.once.key, ctx.clock.now());
      record(ctx, action.id, finish(previous, 'done', Date.now(), detail));
      // Which of the text's earlier sends were ours is not known here: the mark says so.
      markSent(ctx, { field: sentTextKey(action), prior: null });
      rememberSentId(ctx, detail);
      ctx.run.log.info(
        { action: action.id },
        'reconciled an action of unknown outcome: it had reached the platform',
      );
      return { ...base, state: 'done', detail };
    }
    ctx.run.log.info(
      { action: action.id, verdict: verdict.kind },
      'reconciled an action of unknown outcome: doing it',
    );
  }

  if (action.type === 'reply') {
    const skip = await replySkipReason(action, ctx);
    if (skip) {
      if (skip.windowClosed) {
        ctx.observe.onWindowBlocked?.(action);
        await runNested(action.whenClosed);
      }
      record(ctx, action.id, finish(previous, 'skipped', Date.now(), skip.reason));
      return { ...base, state: 'skipped', detail: skip.reason, at: Date.now() };
    }
  }

  const idempotent = isIdempotent(action);
  // From here on the text may be on the platform (even if this process dies mid-call)...
  const sending = idempotent ? undefined : await beginSend(action, ctx, loadHistory);
  const started = begin(previous, Date.now(), sending?.guard);
  if (sending) await ctx.run.state.commit(action.id, started);
  try {
    const detail = await perform(action, ctx);
    record(ctx, action.id, finish(started, 'done', Date.now(), detail));
    rememberSentId(ctx, detail);
    // ...and a slow call may have put it there late: count the window from now.
    if (sending) markSent(ctx, sending.mark);
    return withDetail({ ...base, state: 'done' }, detail);
  } catch (error) {
    const failure = classifyFailure(error, ctx.actions.classifyPlatformError);
    switch (failure.kind) {
      case 'unknown-outcome':
        // Leave `started` (or nothing, for an idempotent action): the next run reconciles before
        // doing anything again, or simply repeats a harmless action.
        throw new ActionInterrupted(action.id, failure, error);
      case 'rejected': {
        const detail = `${failure.code}: ${failure.message}`;
        record(ctx, action.id, finish(started, 'failed', Date.now(), detail));
        ctx.run.log.warn(
          { action: action.id, code: failure.code },
          `action failed for good: ${failure.message}`,
        );
        return { ...base, state: 'failed', detail };
      }
      case 'window-closed': {
        if (action.type === 'reply') {
          ctx.observe.onWindowBlocked?.(action);
          await runNested(action.whenClosed);
        }
        const detail = 'reply window closed (refused by the client guard)';
        record(ctx, action.id, finish(started, 'skipped', Date.now(), detail));
        return { ...base, state: 'skipped', detail, at: Date.now() };
      }
      default:
        if (!idempotent) record(ctx, action.id, finish(started, 'retry', Date.now(), failure.code));
        throw new ActionInterrupted(action.id, failure, error);
    }
  }
}

function withDetail(report: ActionReport, detail: string | undefined): ActionReport {
  if (detail !== undefined) report.detail = detail;
  return report;
}
