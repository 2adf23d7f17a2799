import { createHash } from 'node:crypto';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { RunLogger } from '../../observe/logger.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import {
  CONVERSATION_FIELDS,
  formatSentMark,
  type SendChain,
  type StoredFacts,
} from '../conversation-facts.js';
import {
  classifyFailure,
  type FailureClass,
  type PlatformErrorClassifier,
} from '../failures/classify-failure.js';
import type { ForwardPort, HistoryMessage, PlannedAction, PlatformPort, RulesPort } from '../ports.js';
import { begin, type CollisionGuard, decide, finish, type LedgerEntry } from './action-ledger.js';
import { sentIdField, staleSentIds } from './own-sends.js';
import { comparableText, reconcileAgainstHistory } from './reconcile-action.js';
import { replyWindowVerdict } from './reply-window-verdict.js';
import type { RunState } from './run-state.js';

/** One action's fate in this run, for logs, metrics, the job's return value and dead letters. */
export interface ActionReport {
  id: string;
  type: PlannedAction['type'];
  rule: string;
  state: 'done' | 'skipped' | 'failed';
  detail?: string;
  /** When a reply was held back (ms since epoch): the moment the worker decided. */
  at?: number;
}

/** Thrown to stop the run: the job is retried, paused or dead-lettered by the processor. */
export class ActionInterrupted extends Error {
  readonly failure: FailureClass;
  readonly actionId: string;
  constructor(actionId: string, failure: FailureClass, cause: unknown) {
    super(`action ${actionId} did not complete: ${failure.message}`, { cause });
    this.name = 'ActionInterrupted';
    this.failure = failure;
    this.actionId = actionId;
  }
}

export interface TimerScheduler {
  schedule(input: {
    timerId: string;
    conversationId: string;
    delayMs: number;
    unless: readonly string[];
    actions: PlannedAction[];
    event: ConversationEvent;
    rule: string;
    /** Fixed by the plan (issue 16): the delay then counts to it. */
    dueAt?: string;
    dueLocal?: string;
    clock?: 'wall' | 'business';
    trigger?: 'window_closing';
  }): Promise<void>;
}

export interface ExecutionContext {
  keys: BridgeKeys;
  /** The run's plan and ledger, and what it stages for the conversation hash. */
  state: RunState;
  /** Idempotency scope for forwards and timer ids. */
  scope: string;
  event: ConversationEvent;
  conversationId: string;
  facts: StoredFacts;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  rules: RulesPort;
  timers: TimerScheduler;
  timerIdFor: (scope: string, actionId: string) => string;
  now: () => Date;
  /** Free-form replies stop this long before the window closes (send latency, clock skew). */
  safetyMarginMs: number;
  /** How far before `started` a history message may be dated and still count as ours. */
  reconcileSkewMs: number;
  /** On a replay from the dead-letter set, actions that failed for good are tried again. */
  replay: boolean;
  log: RunLogger;
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
}

/**
 * Runs a plan's actions in order, each exactly once across retries, crashes and redeliveries,
 * by writing the ledger before and after every outside call (see action-ledger.ts).
 */
export async function executeActions(
  actions: readonly PlannedAction[],
  ctx: ExecutionContext,
): Promise<ActionReport[]> {
  const ledger = ctx.state.ledger;
  const reports: ActionReport[] = [];
  let history: HistoryMessage[] | undefined;
  /** The conversation's history, read once per run (or again when `fresh` is asked for). */
  const loadHistory = async (fresh = false) => {
    if (!history || fresh) {
      const read: HistoryMessage[] = [];
      for await (const message of ctx.platform.history(ctx.conversationId)) read.push(message);
      history = read;
    }
    return history;
  };
  const run = async (list: readonly PlannedAction[]): Promise<void> => {
    for (const action of list) {
      const report = await runOne(action, ledger, ctx, loadHistory, run);
      reports.push(report);
      ctx.onAction?.(report);
    }
  };
  await run(actions);
  return reports;
}

/**
 * Records an action's state after its call: staged, written with the run's next durable write or
 * its finish (see run-state.ts). Only `started` must be durable before a call (`ctx.state.commit`).
 */
function record(ctx: ExecutionContext, id: string, entry: LedgerEntry): void {
  ctx.state.stage(id, entry);
}

/** A once_per_conversation mark, in memory for the rest of the run and staged for the conversation. */
function markOnce(ctx: ExecutionContext, onceKey: string, at: Date): void {
  const iso = at.toISOString();
  ctx.facts.onceMarks[onceKey] = iso;
  ctx.state.stageConversation(`${CONVERSATION_FIELDS.once}${onceKey}`, iso);
}

/**
 * Actions whose repetition does no harm: marking need-human (the platform treats a repeat as
 * success), a forward (it carries a stable `webhook-id` for the receiver to dedupe), a timer (its
 * job id is derived from the action). They need no `started` record: if a run dies mid-call, the
 * next run simply does them again. Notes and replies do need it (see action-ledger.ts).
 */
function isIdempotent(action: PlannedAction): boolean {
  return action.type === 'need_human' || action.type === 'forward' || action.type === 'timer';
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
  if (decision.kind === 'finished' && decision.state === 'failed' && ctx.replay) decision = { kind: 'run' };
  if (decision.kind === 'finished') {
    return withDetail({ ...base, state: decision.state }, previous?.detail);
  }

  if (decision.kind === 'reconcile') {
    const verdict = reconcileAgainstHistory(
      action,
      decision.startedAt,
      await loadHistory(),
      claimedMessageIds(ledger),
      ctx.reconcileSkewMs,
      decision.after,
      decision.chain,
    );
    if (verdict.kind === 'present') {
      const detail = verdict.messageId ? `message ${verdict.messageId}` : 'reconciled: found in history';
      if (action.type === 'reply' && action.once) markOnce(ctx, action.once.key, ctx.now());
      record(ctx, action.id, finish(previous, 'done', Date.now(), detail));
      // Which of the text's earlier sends were ours is not known here: the mark says so.
      markSent(ctx, { field: sentTextKey(action), prior: null });
      rememberSentId(ctx, detail);
      ctx.log.info(
        { action: action.id },
        'reconciled an action of unknown outcome: it had reached the platform',
      );
      return { ...base, state: 'done', detail };
    }
    ctx.log.info(
      { action: action.id, verdict: verdict.kind },
      'reconciled an action of unknown outcome: doing it',
    );
  }

  if (action.type === 'reply') {
    const skip = await replySkipReason(action, ctx);
    if (skip) {
      if (skip.windowClosed) {
        ctx.onWindowBlocked?.(action);
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
  if (sending) await ctx.state.commit(action.id, started);
  try {
    const detail = await perform(action, ctx);
    record(ctx, action.id, finish(started, 'done', Date.now(), detail));
    rememberSentId(ctx, detail);
    // ...and a slow call may have put it there late: count the window from now.
    if (sending) markSent(ctx, sending.mark);
    return withDetail({ ...base, state: 'done' }, detail);
  } catch (error) {
    const failure = classifyFailure(error, ctx.classifyPlatformError);
    switch (failure.kind) {
      case 'unknown-outcome':
        // Leave `started` (or nothing, for an idempotent action): the next run reconciles before
        // doing anything again, or simply repeats a harmless action.
        throw new ActionInterrupted(action.id, failure, error);
      case 'rejected': {
        const detail = `${failure.code}: ${failure.message}`;
        record(ctx, action.id, finish(started, 'failed', Date.now(), detail));
        ctx.log.warn({ action: action.id, code: failure.code }, `action failed for good: ${failure.message}`);
        return { ...base, state: 'failed', detail };
      }
      case 'window-closed': {
        if (action.type === 'reply') {
          ctx.onWindowBlocked?.(action);
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

/**
 * Same-text collisions (found by the fault-injection suite): a customer repeats a complaint or a
 * catalog request, the bridge sends the same note or reply again a few seconds later, and that
 * second call fails with an unknown outcome. Reconciliation looks for the text from `started -
 * skew` on, finds the FIRST message and wrongly counts the second action as done: the second note
 * or reply is lost. So every note and reply sent is remembered per conversation for a short while
 * (when its call begins, and again when it ends), and a call whose text was sent that recently
 * records, before it begins, what rules those earlier messages out. When every earlier send of
 * the text in that run of sends is known to have reached the platform (the mark says when the run
 * began and how many there were: `chain` in the ledger), reconciliation counts the text's messages
 * since then and finds this one's only if there is one more. Otherwise (a send of unknown outcome,
 * an older version's mark) the conversation's last history id is read first (`after`), and
 * reconciliation ignores everything up to it. The history is read only in that second case.
 */
export function sentTextKey(action: PlannedAction): string | null {
  let text: string;
  if (action.type === 'note') text = `note:${comparableText(action.text)}`;
  else if (action.type === 'reply')
    text =
      'text' in action.message
        ? `reply:${comparableText(action.message.text)}`
        : `media:${action.message.media.url}`;
  else return null;
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** How long a sent text can be mistaken for a later one: the skew on both clocks, and a second of `sent_at` rounding. */
const collisionWindowMs = (ctx: ExecutionContext) => 2 * ctx.reconcileSkewMs + 1_000;

/** A note or reply about to be sent: its text mark, and the known run of the text's earlier sends. */
interface SendingMark {
  field: string | null;
  /** The earlier sends this one continues ({since: now, count: 0} when none); null when not known. */
  prior: SendChain | null;
}

/**
 * After the call (the window counts from now): the mark again, with the run of sends it closes
 * when this send is done and every earlier one in the run is known. A later send of the same
 * text then needs no history read before its call (`beginSend`).
 */
function markSent(ctx: ExecutionContext, mark: SendingMark): void {
  const { field, prior } = mark;
  if (field === null) return;
  const now = Date.now();
  const chain = prior ? { since: prior.since, count: prior.count + 1 } : null;
  ctx.facts.recentlySent[field] = now;
  if (chain) ctx.facts.recentChains[field] = chain;
  else delete ctx.facts.recentChains[field];
  ctx.state.stageConversation(`${CONVERSATION_FIELDS.recent}${field}`, formatSentMark(now, chain));
}

/**
 * Sends that can be counted in the history: exactly one message each. A text of links only may be
 * stored as several image messages, or as nothing once unreachable links are removed (interface,
 * POST /v1/message, behaviour 3), so its sends are never counted.
 */
function countable(action: PlannedAction): boolean {
  if (action.type === 'note') return comparableText(action.text) !== '';
  if (action.type === 'reply')
    return !('text' in action.message) || comparableText(action.message.text) !== '';
  return false;
}

/** Sent-text marks too old to matter (a run's finish step deletes them from the conversation hash). */
export function staleSentMarks(facts: StoredFacts, reconcileSkewMs: number, now = Date.now()): string[] {
  const window = 2 * reconcileSkewMs + 1_000 + 60_000;
  return [
    ...Object.entries(facts.recentlySent)
      .filter(([, at]) => !(now - at <= window))
      .map(([field]) => `${CONVERSATION_FIELDS.recent}${field}`),
    ...staleSentIds(facts, now),
  ];
}

/** The platform's id of a note or reply the bridge sent, remembered to recognise its echo (own-sends.ts). */
function rememberSentId(ctx: ExecutionContext, detail: string | undefined): void {
  if (detail?.startsWith('message ')) {
    ctx.state.stageConversation(sentIdField(detail.slice(8)), String(Date.now()));
  }
}

function timerTimes(action: Extract<PlannedAction, { type: 'timer' }>) {
  return {
    ...(action.dueAt !== undefined ? { dueAt: action.dueAt } : {}),
    ...(action.dueLocal !== undefined ? { dueLocal: action.dueLocal } : {}),
    ...(action.clock !== undefined ? { clock: action.clock } : {}),
    ...(action.trigger !== undefined ? { trigger: action.trigger } : {}),
  };
}

/**
 * Before a note or reply's call, with the text hashed once:
 * - the guard for its `started` entry: what rules out, should the outcome be unknown, a message of
 *   the same text sent moments before (see `sentTextKey`): nothing when there was none; the run
 *   of those sends when each is known to have reached the platform (no round trip); otherwise the
 *   highest history id now (one history read);
 * - the text's mark, staged as "being sent now, not known" (a crash mid-call must leave a mark
 *   that says so), and the run this send continues, for `markSent`.
 */
async function beginSend(
  action: PlannedAction,
  ctx: ExecutionContext,
  loadHistory: (fresh?: boolean) => Promise<HistoryMessage[]>,
): Promise<{ guard: CollisionGuard; mark: SendingMark }> {
  const field = sentTextKey(action);
  if (field === null) return { guard: {}, mark: { field, prior: null } };
  const now = Date.now();
  const sentAt = ctx.facts.recentlySent[field];
  const inWindow = sentAt !== undefined && now - sentAt <= collisionWindowMs(ctx);
  const counted = countable(action);
  const chain = inWindow && counted ? (ctx.facts.recentChains[field] ?? null) : null;
  let guard: CollisionGuard = {};
  if (chain) guard = { chain: { ...chain } };
  else if (inWindow) {
    // Fresh: the same-text message may have been sent earlier in this very run.
    guard = { after: (await loadHistory(true)).reduce((max, message) => Math.max(max, message.id), 0) };
  }
  const prior = !counted ? null : inWindow ? chain : { since: now, count: 0 };
  ctx.facts.recentlySent[field] = now;
  delete ctx.facts.recentChains[field];
  ctx.state.stageConversation(`${CONVERSATION_FIELDS.recent}${field}`, String(now));
  return { guard, mark: { field, prior } };
}

function withDetail(report: ActionReport, detail: string | undefined): ActionReport {
  if (detail !== undefined) report.detail = detail;
  return report;
}

async function replySkipReason(
  action: Extract<PlannedAction, { type: 'reply' }>,
  ctx: ExecutionContext,
): Promise<{ reason: string; windowClosed: boolean } | undefined> {
  const now = ctx.now();
  if (action.once) {
    const last = ctx.facts.onceMarks[action.once.key];
    if (last && now.getTime() - Date.parse(last) < action.once.ttlMs) {
      return { reason: `once_per_conversation: already sent at ${last}`, windowClosed: false };
    }
  }
  const window = ctx.rules.replyWindow(ctx.event.channel, ctx.facts.lastCustomerMessageAt, now);
  const verdict = replyWindowVerdict(window, now, ctx.safetyMarginMs);
  if (!verdict.send) {
    const last = ctx.facts.lastCustomerMessageAt?.toISOString() ?? 'unknown';
    const why =
      verdict.reason === 'margin' ? 'about to close' : verdict.reason === 'unknown' ? 'unknown' : 'closed';
    return { reason: `reply window ${why} (last customer message ${last})`, windowClosed: true };
  }
  return undefined;
}

async function perform(action: PlannedAction, ctx: ExecutionContext): Promise<string | undefined> {
  const conversationId = ctx.conversationId;
  switch (action.type) {
    case 'note': {
      const result = await ctx.platform.addNote(conversationId, action.text);
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'need_human':
      await ctx.platform.markNeedHuman(conversationId);
      return undefined;
    case 'reply': {
      const now = ctx.now();
      const verdict = replyWindowVerdict(
        ctx.rules.replyWindow(ctx.event.channel, ctx.facts.lastCustomerMessageAt, now),
        now,
        ctx.safetyMarginMs,
      );
      // Closed since the check a moment ago: the client's guard refuses it (handled as window-closed).
      const guard = verdict.send
        ? verdict.guardUntil
          ? { windowClosesAt: verdict.guardUntil }
          : undefined
        : { windowClosesAt: now };
      // The earlier form requires `text` with media too; the current form ignores text when media
      // is present, so the caption (or name, or URL) goes along in both.
      const input =
        'text' in action.message
          ? { conversationId, text: action.message.text }
          : {
              conversationId,
              media: action.message.media,
              text: action.message.media.caption ?? action.message.media.name ?? action.message.media.url,
            };
      const result = await ctx.platform.sendMessage(
        action.replyToMessageId ? { ...input, replyToMessageId: action.replyToMessageId } : input,
        guard,
      );
      if (action.once) markOnce(ctx, action.once.key, ctx.now());
      return result.messageId ? `message ${result.messageId}` : undefined;
    }
    case 'forward': {
      const body = { type: 'convo_bridge.event', rule: action.rule, action: action.id, event: ctx.event };
      const result = await ctx.forwarder.forward(action.destination, body, `${ctx.scope}|${action.id}`);
      return `HTTP ${result.status}`;
    }
    case 'timer': {
      const timerId = ctx.timerIdFor(ctx.scope, action.id);
      await ctx.timers.schedule({
        timerId,
        conversationId,
        delayMs: action.delayMs,
        unless: action.unless,
        actions: action.actions,
        event: ctx.event,
        rule: action.rule,
        ...timerTimes(action),
      });
      return `timer ${timerId}`;
    }
  }
}
