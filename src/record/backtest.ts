import type { CompiledRules } from '../rules/compile-rules.js';
import { evaluateBurstRule, evaluateRules } from '../rules/evaluate-rules.js';
import type { ConversationFacts, Plan, PlannedAction } from '../rules/plan.js';
import { replyWindow } from '../rules/reply-window.js';
import { applyTagChange } from '../rules/tags.js';
import { BurstSimulation } from './backtest-bursts.js';
import {
  type ActionSummary,
  factsFromJson,
  type PlanSummary,
  type RecordedEvent,
  summarizeAction,
  summarizePlan,
} from './recorded-event.js';

/**
 * Backtesting: what a set of rules would have done to recorded events, next to what was
 * done. Pure over plain data: no Redis, no platform, no clock. Each conversation is replayed on
 * its own, its events in recording order, with the worker's bookkeeping simulated: the last
 * customer message and the first message, once-marks, cooldowns and tags, `after:` timers (fired when
 * due, cancelled by an event of an `unless` kind, as worker/processor/prepare-run.ts does) and the reply window
 * (timer replies are re-checked when they fire). The facts of a conversation's first recorded
 * event seed the simulation, so a recording that starts mid-conversation still knows what the
 * bridge knew then. Debounced rules are evaluated once per burst of the recorded
 * customer messages (backtest-bursts.ts); a burst's plan is told with its last message.
 */

/** What one side (before or after) did for one event. */
export interface EventPlanSummary {
  seq: number;
  eventKey: string;
  conversationId: string;
  kind: string;
  now: string;
  text: string;
  matched: string[];
  actions: ActionSummary[];
  blocked: string[];
}

/** A conversation's history under one side: per-event plans and when it was first escalated. */
interface SideResult {
  events: EventPlanSummary[];
  /** Conversation id -> ISO instant of its first need_human (an event's plan or a fired timer). */
  escalatedAt: Map<string, string>;
  /** Actions run by timers that fired within the recording, by conversation. */
  timerActions: { conversationId: string; at: string; action: ActionSummary }[];
}

interface PendingTimer<A> {
  due: number;
  unless: readonly string[];
  children: readonly A[];
}

function conversationsOf(lines: readonly RecordedEvent[]): Map<string, RecordedEvent[]> {
  const groups = new Map<string, RecordedEvent[]>();
  for (const line of lines) {
    const id = line.event.conversationId ?? `(none:${line.event.key})`;
    const group = groups.get(id);
    if (group) group.push(line);
    else groups.set(id, [line]);
  }
  return groups;
}

/** Sorted the way the worker ran them: evaluation time, then recording sequence. */
export function inArrivalOrder(lines: readonly RecordedEvent[]): RecordedEvent[] {
  return [...lines].sort((a, b) => Date.parse(a.now) - Date.parse(b.now) || a.seq - b.seq);
}

function baseSummary(line: RecordedEvent): Omit<EventPlanSummary, 'matched' | 'actions' | 'blocked'> {
  return {
    seq: line.seq,
    eventKey: line.event.key,
    conversationId: line.event.conversationId ?? '',
    kind: line.event.kind,
    now: line.now,
    text: line.event.text,
  };
}

function isNeedHuman(action: { type: string }): boolean {
  return action.type === 'need_human';
}

/** Fires the timers due by `until` (in due order); returns what they did. */
function fireDue<A>(
  pending: PendingTimer<A>[],
  until: number,
  onFire: (timer: PendingTimer<A>, at: number) => void,
): PendingTimer<A>[] {
  const due = pending.filter((t) => t.due <= until).sort((a, b) => a.due - b.due);
  for (const timer of due) onFire(timer, timer.due);
  return pending.filter((t) => t.due > until);
}

/**
 * Replays `lines` under `rules`. `horizon` (ms): timers due after it have not fired (the recording
 * ends there).
 */
export function simulate(rules: CompiledRules, lines: readonly RecordedEvent[], horizon: number): SideResult {
  const events: EventPlanSummary[] = [];
  const escalatedAt = new Map<string, string>();
  const timerActions: SideResult['timerActions'] = [];
  for (const [conversationId, group] of conversationsOf(inArrivalOrder(lines))) {
    const first = group[0];
    if (!first) continue;
    const seed = factsFromJson(first.facts);
    let lastIn = seed.lastCustomerMessageAt;
    // The first customer message is this one when the facts say so, or still to come when the
    // recording starts with another kind of event and no customer message was known.
    const noneYet =
      first.event.kind === 'message_in' ? seed.isFirstCustomerMessage : seed.lastCustomerMessageAt === null;
    let firstKey: string | null = noneYet ? null : '(before the recording)';
    const onceMarks: Record<string, string> = { ...seed.onceMarks };
    const cooldowns: Record<string, string> = { ...(seed.cooldowns ?? {}) };
    // Tags as the worker keeps them: set and removed by the plans' actions (a timer's when it fires).
    const tags = new Map<string, number | null>(Object.entries(seed.tags ?? {}));
    const changeTags = (action: PlannedAction, at: number) => {
      if (action.type === 'tag' || action.type === 'untag') applyTagChange(tags, action, at);
    };
    let pending: PendingTimer<PlannedAction>[] = [];
    const escalate = (at: number) => {
      if (!escalatedAt.has(conversationId)) escalatedAt.set(conversationId, new Date(at).toISOString());
    };
    const channel = first.event.channel;
    // A timer's reply is checked against the window when it fires (worker/processor/process-timer.ts does so).
    const fire = (timer: PendingTimer<PlannedAction>, at: number) => {
      for (const child of timer.children) {
        let run: readonly PlannedAction[] = [child];
        if (child.type === 'reply') {
          const state = replyWindow(rules, channel, lastIn, new Date(at));
          if (state.applies && !state.open) run = child.whenClosed;
        }
        for (const done of run) {
          changeTags(done, at);
          timerActions.push({
            conversationId,
            at: new Date(at).toISOString(),
            action: summarizeAction(done),
          });
          if (isNeedHuman(done)) escalate(at);
        }
      }
    };
    const facts = (isFirst: boolean): ConversationFacts => ({
      lastCustomerMessageAt: lastIn,
      isFirstCustomerMessage: isFirst,
      onceMarks: { ...onceMarks },
      cooldowns: { ...cooldowns },
      tags: Object.fromEntries(tags),
    });
    // What the worker keeps of a plan it ran: cooldowns, once-marks, timers, the first escalation.
    const ran = (plan: Plan, now: number) => {
      const at = new Date(now).toISOString();
      for (const m of plan.matched) if (m.cooldownMs !== null) cooldowns[m.rule] = at;
      for (const action of plan.actions) {
        changeTags(action, now);
        if (action.type === 'reply' && action.once !== null) onceMarks[action.once.key] = at;
        if (action.type === 'timer') {
          pending.push({ due: now + action.delayMs, unless: action.unless, children: action.actions });
        }
        if (isNeedHuman(action)) escalate(now);
      }
    };
    const bursts = new BurstSimulation<EventPlanSummary>(rules, (rule, burst, due, summary) => {
      pending = fireDue(pending, due, fire);
      const plan = evaluateBurstRule(
        rules,
        rule,
        burst,
        facts(firstKey === burst.firstEventKey),
        new Date(due),
      );
      ran(plan, due);
      const told = summarizePlan(plan);
      summary.matched.push(...told.matched);
      summary.actions.push(...told.actions);
      summary.blocked.push(...told.blocked);
    });
    for (const line of group) {
      const now = Date.parse(line.now);
      const event = line.event;
      bursts.endDue(Date.parse(event.receivedAt));
      pending = fireDue(pending, now, fire);
      pending = pending.filter((t) => !t.unless.includes(event.kind));
      if (event.kind === 'message_in') {
        const at = new Date(event.occurredAt);
        if (lastIn === null || at > lastIn) lastIn = at;
        firstKey ??= event.key;
      }
      const plan = evaluateRules(
        rules,
        event,
        facts(event.kind === 'message_in' && firstKey === event.key),
        new Date(now),
      );
      ran(plan, now);
      const summary: EventPlanSummary = { ...baseSummary(line), ...summarizePlan(plan) };
      events.push(summary);
      bursts.onEvent(event, summary);
    }
    bursts.endAll();
    fireDue(pending, horizon, fire);
  }
  return { events, escalatedAt, timerActions };
}

/** What the bridge did, read from the recorded plans; its timers are run by the same rules as simulate's. */
export function recordedSide(lines: readonly RecordedEvent[], horizon: number): SideResult {
  const events: EventPlanSummary[] = [];
  const escalatedAt = new Map<string, string>();
  const timerActions: SideResult['timerActions'] = [];
  for (const [conversationId, group] of conversationsOf(inArrivalOrder(lines))) {
    let pending: PendingTimer<ActionSummary>[] = [];
    const escalate = (at: number) => {
      if (!escalatedAt.has(conversationId)) escalatedAt.set(conversationId, new Date(at).toISOString());
    };
    const fire = (timer: PendingTimer<ActionSummary>, at: number) => {
      for (const child of timer.children) {
        timerActions.push({ conversationId, at: new Date(at).toISOString(), action: child });
        if (isNeedHuman(child)) escalate(at);
      }
    };
    for (const line of group) {
      const now = Date.parse(line.now);
      pending = fireDue(pending, now, fire);
      pending = pending.filter((t) => !t.unless.includes(line.event.kind));
      const plan = line.plan ?? { matched: [], actions: [], blocked: [] };
      for (const action of plan.actions) {
        if (action.type === 'timer') {
          pending.push({
            due: now + (action.delayMs ?? 0),
            unless: action.unless ?? [],
            children: action.actions ?? [],
          });
        }
        if (isNeedHuman(action)) escalate(now);
      }
      events.push({
        ...baseSummary(line),
        matched: plan.matched,
        actions: plan.actions,
        blocked: plan.blocked,
      });
    }
    fireDue(pending, horizon, fire);
  }
  return { events, escalatedAt, timerActions };
}

export interface Example {
  seq: number;
  eventKey: string;
  conversationId: string;
  text: string;
}

export interface RuleCounts {
  rule: string;
  before: number;
  after: number;
}

export interface ActionChange {
  rule: string;
  type: string;
  /** Events where the action now is planned and was not (added), or the other way round. */
  count: number;
  examples: Example[];
}

export interface EscalationChange {
  conversationId: string;
  before: string | null;
  after: string | null;
  change: 'earlier' | 'later' | 'no longer' | 'new';
}

export interface BacktestReport {
  events: number;
  conversations: number;
  from: string | null;
  to: string | null;
  /** Events whose matched rules, actions or blocked replies differ. */
  changedEvents: number;
  rules: RuleCounts[];
  added: ActionChange[];
  removed: ActionChange[];
  escalations: EscalationChange[];
  /** Replies the reply window would replace by when_closed (after), per rule, with the count before. */
  blocked: { rule: string; before: number; after: number; examples: Example[] }[];
  /** Per event, both sides, for events that differ (all events with `allEvents`). */
  changes: { before: EventPlanSummary; after: EventPlanSummary }[];
  /** The new side of every event, as --save writes it and --expect compares. */
  plans: EventPlanSummary[];
}

const MAX_EXAMPLES = 3;

function example(e: EventPlanSummary): Example {
  return { seq: e.seq, eventKey: e.eventKey, conversationId: e.conversationId, text: e.text.slice(0, 80) };
}

function actionKey(a: ActionSummary): string {
  return `${a.rule}\u0000${a.type}`;
}

/** Multiset difference of action (rule, type) pairs: what `b` has more of than `a`. */
function extra(a: readonly ActionSummary[], b: readonly ActionSummary[]): ActionSummary[] {
  const counts = new Map<string, number>();
  for (const x of a) counts.set(actionKey(x), (counts.get(actionKey(x)) ?? 0) + 1);
  const out: ActionSummary[] = [];
  for (const y of b) {
    const n = counts.get(actionKey(y)) ?? 0;
    if (n > 0) counts.set(actionKey(y), n - 1);
    else out.push(y);
  }
  return out;
}

function samePlan(a: PlanSummary, b: PlanSummary): boolean {
  return (
    JSON.stringify([a.matched, a.actions.map((x) => [x.id, x.type]), a.blocked]) ===
    JSON.stringify([b.matched, b.actions.map((x) => [x.id, x.type]), b.blocked])
  );
}

/**
 * One event's two plans compared as the backtest compares them: the same matched rules, actions
 * and blocked replies or not, and the (rule, type) actions each has more of than the other. The
 * operator API tells a dead letter's original plan from what the rules would do now with it.
 */
export function comparePlans(
  before: PlanSummary,
  after: PlanSummary,
): { same: boolean; added: ActionSummary[]; removed: ActionSummary[] } {
  return {
    same: samePlan(before, after),
    added: extra(before.actions, after.actions),
    removed: extra(after.actions, before.actions),
  };
}

/**
 * Compares the new rules with what was done (the recorded plans), or with other rules
 * (`baseline`), over the same recorded events.
 */
export function backtest(
  lines: readonly RecordedEvent[],
  rules: CompiledRules,
  options: { baseline?: CompiledRules } = {},
): BacktestReport {
  const ordered = inArrivalOrder(lines);
  const horizon = ordered.length > 0 ? Date.parse(ordered[ordered.length - 1]?.now ?? '') : 0;
  const before = options.baseline
    ? simulate(options.baseline, ordered, horizon)
    : recordedSide(ordered, horizon);
  const after = simulate(rules, ordered, horizon);
  const afterByKey = new Map(after.events.map((e) => [`${e.seq}|${e.eventKey}|${e.now}`, e]));

  const ruleCounts = new Map<string, RuleCounts>();
  for (const rule of rules.rules) ruleCounts.set(rule.name, { rule: rule.name, before: 0, after: 0 });
  const count = (rule: string, side: 'before' | 'after') => {
    const entry = ruleCounts.get(rule) ?? { rule, before: 0, after: 0 };
    entry[side] += 1;
    ruleCounts.set(rule, entry);
  };
  const added = new Map<string, ActionChange>();
  const removed = new Map<string, ActionChange>();
  const blocked = new Map<string, { rule: string; before: number; after: number; examples: Example[] }>();
  const note = (into: Map<string, ActionChange>, a: ActionSummary, e: EventPlanSummary) => {
    const key = actionKey(a);
    const entry = into.get(key) ?? { rule: a.rule, type: a.type, count: 0, examples: [] };
    entry.count += 1;
    if (entry.examples.length < MAX_EXAMPLES && !entry.examples.some((x) => x.eventKey === e.eventKey)) {
      entry.examples.push(example(e));
    }
    into.set(key, entry);
  };
  const ruleOfAction = (id: string) => id.slice(0, id.lastIndexOf('#'));
  const noteBlocked = (id: string, side: 'before' | 'after', e: EventPlanSummary) => {
    const rule = ruleOfAction(id);
    const entry = blocked.get(rule) ?? { rule, before: 0, after: 0, examples: [] };
    entry[side] += 1;
    if (side === 'after' && entry.examples.length < MAX_EXAMPLES) entry.examples.push(example(e));
    blocked.set(rule, entry);
  };

  const changes: BacktestReport['changes'] = [];
  for (const b of before.events) {
    const a = afterByKey.get(`${b.seq}|${b.eventKey}|${b.now}`);
    if (!a) continue;
    for (const rule of b.matched) count(rule, 'before');
    for (const rule of a.matched) count(rule, 'after');
    for (const x of extra(b.actions, a.actions)) note(added, x, a);
    for (const x of extra(a.actions, b.actions)) note(removed, x, b);
    for (const id of b.blocked) noteBlocked(id, 'before', b);
    for (const id of a.blocked) noteBlocked(id, 'after', a);
    if (!samePlan(a, b)) changes.push({ before: b, after: a });
  }

  const escalations: EscalationChange[] = [];
  const conversations = new Set([...before.escalatedAt.keys(), ...after.escalatedAt.keys()]);
  for (const conversationId of [...conversations].sort()) {
    const was = before.escalatedAt.get(conversationId) ?? null;
    const now = after.escalatedAt.get(conversationId) ?? null;
    if (was === now) continue;
    const change =
      was === null
        ? 'new'
        : now === null
          ? 'no longer'
          : Date.parse(now) < Date.parse(was)
            ? 'earlier'
            : 'later';
    escalations.push({ conversationId, before: was, after: now, change });
  }
  const byCount = (x: ActionChange, y: ActionChange) => y.count - x.count || x.rule.localeCompare(y.rule);
  const bySeq = (x: Example, y: Example) => x.seq - y.seq;
  for (const change of [...added.values(), ...removed.values(), ...blocked.values()])
    change.examples.sort(bySeq);
  return {
    events: ordered.length,
    conversations: conversationsOf(ordered).size,
    from: ordered[0]?.now ?? null,
    to: ordered[ordered.length - 1]?.now ?? null,
    changedEvents: changes.length,
    rules: [...ruleCounts.values()],
    added: [...added.values()].sort(byCount),
    removed: [...removed.values()].sort(byCount),
    escalations,
    blocked: [...blocked.values()].filter((b) => b.before > 0 || b.after > 0),
    changes,
    plans: after.events,
  };
}
