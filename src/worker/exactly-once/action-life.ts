import { UnrecoverableError } from 'bullmq';
import { expiryOf, liveTags, sortedNames } from '../../rules/tags.js';
import { CONVERSATION_FIELDS, formatSentMark } from '../conversation-facts.js';
import { ActionInterrupted } from '../failures/action-interrupted.js';
import { classifyFailure } from '../failures/classify-failure.js';
import type { ActionReport, HistoryMessage, PlannedAction } from '../ports.js';
import {
  begin,
  type CollisionGuard,
  decide,
  ended,
  type LedgerEntry,
  type LedgerState,
} from './action-ledger.js';
import type {
  ActionObserver,
  ActionPorts,
  ClockPort,
  ExecutionContext,
  RunSubject,
} from './execution-context.js';
import { reconcileAgainstHistory } from './reconcile-action.js';
import { type ReplyWindowVerdict, replyWindowVerdict } from './reply-window-verdict.js';
import { collisionWindowMs, countable, type SendingMark, sentIdField, sentTextKey } from './sent-marks.js';
import { tagField } from './tag-actions.js';

/**
 * One action's exactly-once life, in the order it is lived (`runOne`):
 *
 * 1. **decide**: the action's ledger entry (action-ledger.ts) says what is left to do: nothing
 *    (finished), call the platform (never begun, or provably not sent), or reconcile (`started`:
 *    the outcome of an earlier call is unknown);
 * 2. **reconcile**: an action of unknown outcome is looked for in the conversation's history
 *    (reconcile-action.ts); found, it is finished as done, never sent again;
 * 3. a reply the once-mark or the reply window holds back is skipped (its when_closed run instead);
 * 4. **begin**: a note or reply records `started` durably before its call, with what rules out a
 *    same-text message sent moments before (sent-marks.ts); idempotent actions need no record;
 * 5. **perform**: the one outside call (platform, forward, timer) or the tag fields;
 * 6. **finish**: the entry's end state is staged (run-state.ts writes it with the run's next
 *    write), with the send's marks; a failure is classified: refused for good, window closed,
 *    or interrupted (the run stops; the ledger says what the next run does).
 *
 * The ledger's states:
 *
 *   (absent) --begin--> started --succeeded--> done
 *                          |--not sent-----> retry      (provably never reached the platform: 429, refused)
 *                          |--rejected-----> failed     (4xx validation: permanent, never retried)
 *                          '--crash / unknown outcome: stays `started`
 *   (absent) --skip--> skipped   (window closed, once-per-conversation, cancelled timer)
 */

/** The ports an action's life reaches, by group (a processor's ports give them). */
export interface LifePorts {
  actions: ActionPorts;
  clock: ClockPort;
  observe: ActionObserver;
}

/**
 * Runs a plan's actions for an event, a fired timer or a burst, each exactly once across
 * retries, crashes and redeliveries, collecting each report into `collected` as it happens (so a
 * failure policy sees what was done before the run stopped). Actions the platform refused for good
 * make the run fail as unrecoverable, so the job is dead-lettered with them named.
 */
export async function runActions(
  ports: LifePorts,
  run: RunSubject,
  actions: readonly PlannedAction[],
  collected: ActionReport[],
): Promise<ActionReport[]> {
  const { onAction, onWindowBlocked } = ports.observe;
  const observe: ActionObserver = {
    onAction: (report) => {
      collected.push(report);
      onAction?.(report);
    },
    ...(onWindowBlocked ? { onWindowBlocked } : {}),
  };
  const reports = await executeActions(actions, { actions: ports.actions, clock: ports.clock, observe, run });
  const failed = reports.filter((r) => r.state === 'failed');
  if (failed.length > 0) {
    throw new UnrecoverableError(
      `the platform refused ${failed.length} action(s): ${failed.map((f) => `${f.id} (${f.detail ?? 'failed'})`).join('; ')}`,
    );
  }
  return reports;
}

async function executeActions(
  actions: readonly PlannedAction[],
  ctx: ExecutionContext,
): Promise<ActionReport[]> {
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
      const report = await runOne(action, ctx, loadHistory, run);
      reports.push(report);
      ctx.observe.onAction?.(report);
    }
  };
  await run(actions);
  return reports;
}

async function runOne(
  action: PlannedAction,
  ctx: ExecutionContext,
  loadHistory: (fresh?: boolean) => Promise<HistoryMessage[]>,
  runNested: (list: readonly PlannedAction[]) => Promise<void>,
): Promise<ActionReport> {
  const { state, log } = ctx.run;
  const base = { id: action.id, type: action.type, rule: action.rule } as const;
  const previous = state.ledger.get(action.id);
  // 1. decide
  let decision = decide(previous);
  if (decision.kind === 'finished' && decision.state === 'failed' && ctx.run.replay)
    decision = { kind: 'run' };
  if (decision.kind === 'finished') {
    const report: ActionReport = { ...base, state: decision.state };
    if (previous?.detail !== undefined) report.detail = previous.detail;
    return report;
  }

  // 2. reconcile. A timer left `started` is not looked for in history: its registration says (`perform`).
  if (decision.kind === 'reconcile' && action.type !== 'timer') {
    const verdict = reconcileAgainstHistory(
      action,
      decision.startedAt,
      await loadHistory(),
      claimedMessageIds(state.ledger),
      ctx.clock.settings.reconcileSkewMs,
      decision.after,
      decision.chain,
    );
    if (verdict.kind === 'present') {
      const detail = verdict.messageId ? `message ${verdict.messageId}` : 'reconciled: found in history';
      if (action.type === 'reply' && action.once) markOnce(ctx.run, action.once.key, ctx.clock.now());
      // Which of the text's earlier sends were ours is not known here: the mark says so.
      finish(ctx.run, action, previous, 'done', detail, { field: sentTextKey(action), prior: null });
      log.info({ action: action.id }, 'reconciled an action of unknown outcome: it had reached the platform');
      return { ...base, state: 'done', detail };
    }
    log.info(
      { action: action.id, verdict: verdict.kind },
      'reconciled an action of unknown outcome: doing it',
    );
  }

  // 3. held back (once-mark, reply window)
  if (action.type === 'reply') {
    const skip = replySkipReason(action, ctx);
    if (skip) {
      if (skip.windowClosed) {
        ctx.observe.onWindowBlocked?.(action);
        await runNested(action.whenClosed);
      }
      finish(ctx.run, action, previous, 'skipped', skip.reason);
      return { ...base, state: 'skipped', detail: skip.reason, at: Date.now() };
    }
  }

  // 4. begin. From here on the text may be on the platform (even if this process dies mid-call)...
  const idempotent = isIdempotent(action);
  const sending = idempotent ? undefined : await beginSend(action, ctx, loadHistory);
  const started = begin(previous, Date.now(), sending?.guard);
  if (sending) await state.commit(action.id, started);
  try {
    // 5. perform
    const detail = await perform(action, ctx);
    // 6. finish. ...and a slow call may have put it there late: the mark counts the window from now.
    finish(ctx.run, action, started, 'done', detail, sending?.mark);
    const report: ActionReport = { ...base, state: 'done' };
    if (detail !== undefined) report.detail = detail;
    return report;
  } catch (error) {
    return failed(action, ctx, started, error, runNested);
  }
}

/** A call that threw: refused for good, refused by the window guard, or interrupted (rethrown). */
async function failed(
  action: PlannedAction,
  ctx: ExecutionContext,
  started: LedgerEntry,
  error: unknown,
  runNested: (list: readonly PlannedAction[]) => Promise<void>,
): Promise<ActionReport> {
  const base = { id: action.id, type: action.type, rule: action.rule } as const;
  const failure = classifyFailure(error, ctx.actions.classifyPlatformError);
  switch (failure.kind) {
    case 'unknown-outcome':
      // Leave `started` (or nothing, for an idempotent action): the next run reconciles before
      // doing anything again, or simply repeats a harmless action.
      throw new ActionInterrupted(action.id, failure, error);
    case 'rejected': {
      const detail = `${failure.code}: ${failure.message}`;
      finish(ctx.run, action, started, 'failed', detail);
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
      finish(ctx.run, action, started, 'skipped', detail);
      return { ...base, state: 'skipped', detail, at: Date.now() };
    }
    default:
      if (!isIdempotent(action)) finish(ctx.run, action, started, 'retry', failure.code);
      throw new ActionInterrupted(action.id, failure, error);
  }
}

// --- 1. decide ---------------------------------------------------------------------------------

// --- 2. reconcile ------------------------------------------------------------------------------

/** Message ids the run's other actions are known to have produced (reconciliation leaves them out). */
function claimedMessageIds(ledger: ReadonlyMap<string, LedgerEntry>): Set<string> {
  const ids = new Set<string>();
  for (const entry of ledger.values()) {
    if (entry.state === 'done' && entry.detail?.startsWith('message ')) ids.add(entry.detail.slice(8));
  }
  return ids;
}

// --- 3. held back ------------------------------------------------------------------------------

function replySkipReason(
  action: Extract<PlannedAction, { type: 'reply' }>,
  ctx: ExecutionContext,
): { reason: string; windowClosed: boolean } | undefined {
  const { facts } = ctx.run;
  const now = ctx.clock.now();
  if (action.once) {
    const last = facts.onceMarks[action.once.key];
    if (last && now.getTime() - Date.parse(last) < action.once.ttlMs) {
      return { reason: `once_per_conversation: already sent at ${last}`, windowClosed: false };
    }
  }
  const verdict = windowVerdict(ctx, now);
  if (!verdict.send) {
    const last = facts.lastCustomerMessageAt?.toISOString() ?? 'unknown';
    const why =
      verdict.reason === 'margin' ? 'about to close' : verdict.reason === 'unknown' ? 'unknown' : 'closed';
    return { reason: `reply window ${why} (last customer message ${last})`, windowClosed: true };
  }
  return undefined;
}

/**
 * The worker's last word on a free-form reply now (reply-window-verdict.ts): asked before the
 * reply is begun, and again right before its call.
 */
function windowVerdict(ctx: ExecutionContext, now: Date): ReplyWindowVerdict {
  const { event, facts, rules } = ctx.run;
  const window = rules.replyWindow(event.channel, facts.lastCustomerMessageAt, now);
  return replyWindowVerdict(window, now, ctx.clock.settings.safetyMarginMs);
}

// --- 4. begin ----------------------------------------------------------------------------------

/**
 * Actions whose repetition does no harm: marking need-human (the platform treats a repeat as
 * success), a forward (it carries a stable `webhook-id` for the receiver to dedupe), a timer (its
 * job id is derived from the action, and it records `started` itself once registered, so that a
 * repeat after its job is done and gone adds nothing: `perform`), a tag or untag (a field of the
 * conversation hash, written with the ledger entry that says it is done; tag-actions.ts). They
 * need no `started` record before the call: if a run dies mid-call, the next run simply does them
 * again. Notes and replies do need it.
 */
function isIdempotent(action: PlannedAction): boolean {
  return action.type !== 'note' && action.type !== 'reply';
}

/**
 * Before a note or reply's call, with the text hashed once:
 * - the guard for its `started` entry: what rules out, should the outcome be unknown, a message of
 *   the same text sent moments before (sent-marks.ts): nothing when there was none; the run of
 *   those sends when each is known to have reached the platform (no round trip); otherwise the
 *   highest history id now (one history read);
 * - the text's mark, staged as "being sent now, not known" (a crash mid-call must leave a mark
 *   that says so), and the run this send continues, for the finish step.
 */
async function beginSend(
  action: PlannedAction,
  ctx: ExecutionContext,
  loadHistory: (fresh?: boolean) => Promise<HistoryMessage[]>,
): Promise<{ guard: CollisionGuard; mark: SendingMark }> {
  const { facts, state } = ctx.run;
  const field = sentTextKey(action);
  if (field === null) return { guard: {}, mark: { field, prior: null } };
  const now = Date.now();
  const sentAt = facts.recentlySent[field];
  const inWindow =
    sentAt !== undefined && now - sentAt <= collisionWindowMs(ctx.clock.settings.reconcileSkewMs);
  const counted = countable(action);
  const chain = inWindow && counted ? (facts.recentChains[field] ?? null) : null;
  let guard: CollisionGuard = {};
  if (chain) guard = { chain: { ...chain } };
  else if (inWindow) {
    // Fresh: the same-text message may have been sent earlier in this very run.
    guard = { after: (await loadHistory(true)).reduce((max, message) => Math.max(max, message.id), 0) };
  }
  const prior = !counted ? null : inWindow ? chain : { since: now, count: 0 };
  facts.recentlySent[field] = now;
  delete facts.recentChains[field];
  state.stageConversation(`${CONVERSATION_FIELDS.recent}${field}`, String(now));
  return { guard, mark: { field, prior } };
}

// --- 5. perform --------------------------------------------------------------------------------

async function perform(action: PlannedAction, ctx: ExecutionContext): Promise<string | undefined> {
  const { conversationId, event, facts, state, scope } = ctx.run;
  const { platform, forwarder, timers } = ctx.actions;
  const now = ctx.clock.now;
  switch (action.type) {
    case 'note': {
      const result = await platform.addNote(conversationId, action.text);
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'need_human':
      await platform.markNeedHuman(conversationId);
      return undefined;
    case 'reply': {
      const at = now();
      const verdict = windowVerdict(ctx, at);
      // Closed since the check a moment ago: the client's guard refuses it (handled as window-closed).
      // Judged by the worker's clock, the one the verdict used (a guard on the system clock
      // refused sends the worker's shifted test clock had found in time).
      const guard = verdict.send
        ? verdict.guardUntil
          ? { windowClosesAt: verdict.guardUntil, now }
          : undefined
        : { windowClosesAt: at, now };
      const result = await platform.sendMessage(replyInput(action, conversationId), guard);
      if (action.once) markOnce(ctx.run, action.once.key, now());
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'forward': {
      // The tags as the plan fixed them, or those in force now (a timer's forward).
      const tags = action.tags ?? sortedNames(liveTags(facts.tags, now().getTime()));
      const body = { type: 'convo_bridge.event' as const, rule: action.rule, action: action.id, event, tags };
      const result = await forwarder.forward(action.destination, body, `${scope}|${action.id}`);
      return `HTTP ${result.status}`;
    }
    case 'tag':
    case 'untag':
      return setTags(action, ctx.run, now().getTime());
    case 'timer': {
      const timerId = timers.idFor(scope, action.id);
      // Done jobs are not kept (retention.done_events), so the job id alone does not stop
      // a repeat from setting a timer that already fired: `started` is recorded once the timer is
      // registered, and a run that finds it (an earlier run was cut off) keeps a registration but
      // never makes a new one: no registration means the timer fired or was cancelled since.
      const previous = state.ledger.get(action.id);
      const outcome = await timers.schedule({
        timerId,
        conversationId,
        delayMs: action.delayMs,
        unless: action.unless,
        actions: action.actions,
        event,
        rule: action.rule,
        ...timerTimes(action),
        resumed: previous?.state === 'started',
        onRegistered: () => state.commit(action.id, begin(previous, Date.now())),
      });
      return outcome === 'gone'
        ? `timer ${timerId} (fired or cancelled since an earlier run)`
        : `timer ${timerId}`;
    }
  }
}

/**
 * The earlier form requires `text` with media too; the current form ignores text when media is
 * present, so the caption (or name, or URL) goes along in both.
 */
function replyInput(action: Extract<PlannedAction, { type: 'reply' }>, conversationId: string) {
  const input =
    'text' in action.message
      ? { conversationId, text: action.message.text }
      : {
          conversationId,
          media: action.message.media,
          text: action.message.media.caption ?? action.message.media.name ?? action.message.media.url,
        };
  return action.replyToMessageId ? { ...input, replyToMessageId: action.replyToMessageId } : input;
}

/**
 * Tag and untag actions: no platform call. The tags are fields of the conversation hash, staged
 * with the run's state (tag-actions.ts says when they are written); the run's facts are updated in
 * memory, so a forward later in the same run carries them.
 */
function setTags(
  action: Extract<PlannedAction, { type: 'tag' | 'untag' }>,
  run: RunSubject,
  nowMs: number,
): string {
  const tags = run.facts.tags;
  if (action.type === 'untag') {
    for (const name of action.tags) {
      delete tags[name];
      run.state.stageConversationRemoval(tagField(name));
    }
    return `untagged ${action.tags.join(', ')}`;
  }
  const until = expiryOf(action, nowMs);
  for (const name of action.tags) {
    tags[name] = until;
    run.state.stageConversation(tagField(name), until === null ? '0' : String(until));
  }
  return `tagged ${action.tags.join(', ')}${until === null ? '' : ` until ${new Date(until).toISOString()}`}`;
}

function timerTimes(action: Extract<PlannedAction, { type: 'timer' }>) {
  return {
    ...(action.dueAt !== undefined ? { dueAt: action.dueAt } : {}),
    ...(action.dueLocal !== undefined ? { dueLocal: action.dueLocal } : {}),
    ...(action.clock !== undefined ? { clock: action.clock } : {}),
    ...(action.trigger !== undefined ? { trigger: action.trigger } : {}),
  };
}

// --- 6. finish ---------------------------------------------------------------------------------

/**
 * An action's end in this run: its ledger entry, staged (written with the run's next durable
 * write or its finish: run-state.ts; only `started` must be durable before a call), and, for a
 * note or reply that reached the platform, what the conversation remembers of the send: the
 * platform's message id (to know its echo, own-sends.ts) and the text's mark again (`mark`).
 */
function finish(
  run: RunSubject,
  action: PlannedAction,
  previous: LedgerEntry | undefined,
  end: Exclude<LedgerState, 'started'>,
  detail?: string,
  mark?: SendingMark,
): void {
  run.state.stage(action.id, ended(previous, end, Date.now(), detail));
  if (end !== 'done') return;
  if (detail?.startsWith('message ')) {
    run.state.stageConversation(sentIdField(detail.slice(8)), String(Date.now()));
  }
  if (mark) markSent(run, mark);
}

/**
 * After the call (the window counts from now): the text's mark again, with the run of sends it
 * closes when this send is done and every earlier one in the run is known. A later send of the
 * same text then needs no history read before its call (`beginSend`).
 */
function markSent(run: RunSubject, mark: SendingMark): void {
  const { field, prior } = mark;
  if (field === null) return;
  const now = Date.now();
  const chain = prior ? { since: prior.since, count: prior.count + 1 } : null;
  run.facts.recentlySent[field] = now;
  if (chain) run.facts.recentChains[field] = chain;
  else delete run.facts.recentChains[field];
  run.state.stageConversation(`${CONVERSATION_FIELDS.recent}${field}`, formatSentMark(now, chain));
}

/** A once_per_conversation mark, in memory for the rest of the run and staged for the conversation. */
function markOnce(run: RunSubject, onceKey: string, at: Date): void {
  const iso = at.toISOString();
  run.facts.onceMarks[onceKey] = iso;
  run.state.stageConversation(`${CONVERSATION_FIELDS.once}${onceKey}`, iso);
}
