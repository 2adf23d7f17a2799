import { formatDuration } from '../base/duration.js';
import { type ConversationEvent, customerName } from '../events/conversation-event.js';
import { type Burst, burstText } from './burst.js';
import { type BusinessHoursState, businessHoursAt } from './business-hours.js';
import { addBusinessTime, formatLocal } from './business-time.js';
import {
  type CompiledAction,
  type CompiledCondition,
  type CompiledRule,
  type CompiledRules,
  listForReason,
} from './compile-rules.js';
import { findKeywords } from './keyword-index.js';
import { normalizeWords } from './normalize-text.js';
import type {
  BlockedReply,
  ConversationFacts,
  Plan,
  PlannedAction,
  ReplyWindowPlan,
  RuleOutcome,
} from './plan.js';
import { replyWindow } from './reply-window.js';
import { applyTagChange, liveTags, renderTags, sortedNames, tagsTest } from './tags.js';
import { renderTemplate, type TemplateContext } from './template.js';

/**
 * Decides what to do for one event: every rule's outcome with a reason, and the actions in
 * order with templates rendered. Pure: no I/O, the clock is `now`, the conversation's history is
 * `facts`. The worker carries out the plan exactly once.
 */
export function evaluateRules(
  rules: CompiledRules,
  event: ConversationEvent,
  facts: ConversationFacts,
  now: Date,
): Plan {
  const table = rules.byKind[event.kind];
  const actions: PlannedAction[] = [];
  const blockedReplies: BlockedReply[] = [];
  // Outcomes of the rules that were evaluated; the others keep their precomputed outcome
  // (wrong kind, or none of their keywords in the text).
  const evaluated = new Map<number, RuleOutcome>();
  let stoppedBy: CompiledRule | undefined;
  const text = event.caption === '' ? event.text : `${event.text}\n${event.caption}`;
  const found = findKeywords(rules.keywordIndex, normalizeWords(text));

  // Candidates: rules of this kind without a keyword gate, plus those whose gate keyword occurs.
  let candidates = table.always;
  if (found.size > 0 && table.gated.size > 0) {
    const set = new Set(table.always);
    for (const id of found.keys()) for (const index of table.gated.get(id) ?? []) set.add(index);
    candidates = [...set].sort((a, b) => a - b);
  }
  const armsWindowClosing = event.kind === 'message_in' && rules.windowClosing.length > 0;
  if (candidates.length > 0 || armsWindowClosing) {
    const ctx: EvalContext = {
      rules,
      event,
      facts,
      now,
      found,
      text,
      burst: undefined,
      lastCustomerMessageAt: lastCustomerMessageAt(event, facts),
      hours: undefined,
      blockedReplies,
      tags: undefined,
    };
    for (const index of candidates) {
      const rule = rules.rules[index];
      if (!rule) continue;
      const result = evaluateRule(rule, ctx, actions);
      evaluated.set(index, result.outcome);
      if (result.stops) {
        stoppedBy = rule;
        break;
      }
    }
    // A clock of its own, not an answer to this event: `stop` of an event rule does not skip it.
    if (armsWindowClosing) {
      for (const index of rules.windowClosing) {
        const rule = rules.rules[index];
        if (rule) evaluated.set(index, armWindowClosing(rule, ctx, actions));
      }
    }
  }
  const matched = [...evaluated.entries()]
    .filter(([, outcome]) => outcome.status === 'matched')
    .sort(([a], [b]) => a - b)
    .map(([, outcome]) => outcome);
  return withLazyOutcomes(actions, matched, blockedReplies, () => {
    const outcomes = table.defaults.slice();
    for (const [index, outcome] of evaluated) outcomes[index] = outcome;
    if (stoppedBy) {
      const reason = `skipped: an earlier rule '${stoppedBy.name}' has stop: true`;
      for (let later = stoppedBy.index + 1; later < outcomes.length; later++) {
        if (rules.rules[later]?.windowClosingBeforeMs !== null && evaluated.has(later)) continue;
        const name = rules.rules[later]?.name ?? '';
        outcomes[later] = { rule: name, status: 'not_matched', reason, notes: [], cooldownMs: null };
      }
    }
    return outcomes;
  });
}

/**
 * The outcome list has one entry per rule, so building it costs O(rules) even when the keyword
 * index ruled out all but a few. It is built on first read (then kept), so an event's cost grows
 * with its text, not with the size of the rule set, unless someone reads every outcome. It is an
 * ordinary enumerable property to callers: JSON.stringify and spreading see it.
 */
function withLazyOutcomes(
  actions: PlannedAction[],
  matched: RuleOutcome[],
  blockedReplies: BlockedReply[],
  build: () => RuleOutcome[],
): Plan {
  let outcomes: RuleOutcome[] | undefined;
  return {
    actions,
    matched,
    blockedReplies,
    get outcomes() {
      outcomes ??= build();
      return outcomes;
    },
    set outcomes(value: RuleOutcome[]) {
      outcomes = value;
    },
  };
}

interface EvalContext {
  rules: CompiledRules;
  event: ConversationEvent;
  facts: ConversationFacts;
  now: Date;
  found: ReadonlyMap<number, number>;
  /** What text conditions read: the message's text and caption, or a burst's text. */
  text: string;
  /** Set when a debounced rule is evaluated on its burst. */
  burst: Burst | undefined;
  lastCustomerMessageAt: Date | null;
  hours: BusinessHoursState | undefined;
  blockedReplies: BlockedReply[];
  /**
   * The conversation's tags as this evaluation sees them (built on first use): those in force at
   * the event's start, changed by the tag and untag actions planned so far, in plan order.
   */
  tags: Map<string, number | null> | undefined;
}

function tagView(ctx: EvalContext): Map<string, number | null> {
  ctx.tags ??= liveTags(ctx.facts.tags, ctx.now.getTime());
  return ctx.tags;
}

/** A tag or untag planned for the event is seen by later actions and rules (docs/rules.md#tags). */
function applyPlanned(ctx: EvalContext, planned: PlannedAction[]): PlannedAction[] {
  for (const p of planned) {
    if (p.type === 'tag' || p.type === 'untag') applyTagChange(tagView(ctx), p, ctx.now.getTime());
  }
  return planned;
}

interface MatchInfo {
  keyword: string;
  keywordPosition: number;
  keywords: string[];
  regexMatch: string;
}

interface TestResult {
  ok: boolean;
  reason: string;
}

/** Closer than this to `now`, the event's time is "now" in reasons. */
const SAME_MOMENT_MS = 60_000;

/**
 * The instant `business_hours` is judged at: when the event happened (the customer wrote), not
 * when the worker got to it. After a backlog or an outage, a message written at 16:55 is still
 * "during opening hours" at 17:30. An event time in the future (a platform
 * clock ahead of ours) or an unreadable one counts as now.
 */
export function businessHoursInstant(event: Pick<ConversationEvent, 'occurredAt'>, now: Date): Date {
  const occurred = Date.parse(event.occurredAt);
  if (!Number.isFinite(occurred) || occurred > now.getTime()) return now;
  return new Date(occurred);
}

/**
 * A debounced rule evaluated once on its burst: the burst's last message is the event
 * (fields, channel, reply window, `event.*`), text conditions read the burst's text, `has_media`
 * holds when any message had media, templates get `{{burst.*}}`. The plan's outcomes hold this
 * rule only. `facts` are the conversation's when the burst ends (isFirstCustomerMessage: the burst
 * holds the conversation's first customer message).
 */
export function evaluateBurstRule(
  rules: CompiledRules,
  rule: CompiledRule,
  burst: Burst,
  facts: ConversationFacts,
  now: Date,
): Plan {
  const event = burst.lastEvent;
  const text = burstText(burst);
  const blockedReplies: BlockedReply[] = [];
  const ctx: EvalContext = {
    rules,
    event,
    facts,
    now,
    found: findKeywords(rules.keywordIndex, normalizeWords(text)),
    text,
    burst,
    lastCustomerMessageAt: lastCustomerMessageAt(event, facts),
    hours: undefined,
    blockedReplies,
    tags: undefined,
  };
  const actions: PlannedAction[] = [];
  const { outcome } = evaluateRule(rule, ctx, actions);
  const dropped = burst.droppedTexts > 0 ? `; the text of the last ${burst.droppedTexts} was not kept` : '';
  const described = { ...outcome, reason: `burst of ${burst.count} message(s)${dropped}: ${outcome.reason}` };
  return {
    actions,
    matched: described.status === 'matched' ? [described] : [],
    blockedReplies,
    outcomes: [described],
  };
}

function lastCustomerMessageAt(event: ConversationEvent, facts: ConversationFacts): Date | null {
  if (event.kind !== 'message_in') return facts.lastCustomerMessageAt;
  const occurred = new Date(event.occurredAt);
  const known = facts.lastCustomerMessageAt;
  return known === null || occurred.getTime() > known.getTime() ? occurred : known;
}

function evaluateRule(
  rule: CompiledRule,
  ctx: EvalContext,
  actions: PlannedAction[],
): { outcome: RuleOutcome; stops: boolean } {
  const match = emptyMatch();
  const test = rule.condition
    ? evaluateCondition(rule.condition, ctx, match)
    : { ok: true, reason: `no conditions: every ${rule.onText} event` };
  if (!test.ok) return { outcome: notMatched(rule, test.reason), stops: false };

  if (rule.cooldownMs !== null) {
    const last = parseInstant(ctx.facts.cooldowns?.[rule.name]);
    if (last !== null && ctx.now.getTime() - last < rule.cooldownMs) {
      const reason = `suppressed: cooldown ${formatDuration(rule.cooldownMs)} (last fired ${formatDuration(ctx.now.getTime() - last)} ago)`;
      return { outcome: notMatched(rule, reason), stops: false };
    }
  }

  const notes: string[] = [];
  const suppressed: string[] = [];
  const planned: PlannedAction[] = [];
  const templateContext = buildTemplateContext(rule, ctx, match);
  rule.actions.forEach((action, i) => {
    const id = `${rule.name}#${i}`;
    if (action.type === 'reply' && action.onceMs !== null) {
      const last = parseInstant(ctx.facts.onceMarks[id]);
      if (last !== null && ctx.now.getTime() - last < action.onceMs) {
        const text = `suppressed: once_per_conversation ${formatDuration(action.onceMs)} (last ${formatDuration(ctx.now.getTime() - last)} ago)`;
        suppressed.push(text);
        notes.push(`action ${id} (reply) ${text}`);
        return;
      }
    }
    planned.push(...applyPlanned(ctx, planAction(action, id, rule, ctx, templateContext, notes, true)));
  });
  if (planned.length === 0 && suppressed.length > 0) {
    return { outcome: notMatched(rule, suppressed.join('; ')), stops: false };
  }
  actions.push(...planned);
  return {
    outcome: { rule: rule.name, status: 'matched', reason: test.reason, notes, cooldownMs: rule.cooldownMs },
    stops: rule.stop,
  };
}

/**
 * An `on: window_closing` rule for a customer message: a timer due `before` ahead of the
 * end of the reply window this message opens, cancelled by the next customer message (which arms
 * its own: a re-arm) or by an agent reply. Its conditions and templates are judged against the
 * customer message now; its actions run when it fires (a reply is checked against the window then).
 */
function armWindowClosing(rule: CompiledRule, ctx: EvalContext, actions: PlannedAction[]): RuleOutcome {
  const beforeMs = rule.windowClosingBeforeMs ?? 0;
  const state = replyWindow(ctx.rules, ctx.event.channel, ctx.lastCustomerMessageAt, ctx.now);
  if (!state.applies) {
    return notMatched(
      rule,
      `no reply window on this channel (kind ${state.channelKind ?? 'unknown'}; reply_window.applies_to: ${ctx.rules.replyWindow.appliesTo.join(', ')})`,
    );
  }
  if (state.closesAt === null || !state.open) {
    return notMatched(rule, 'the reply window is already closed: nothing to warn about');
  }
  const match = emptyMatch();
  const test = rule.condition
    ? evaluateCondition(rule.condition, ctx, match)
    : { ok: true, reason: 'no conditions: every customer message on a windowed channel' };
  if (!test.ok) return notMatched(rule, test.reason);
  const closes = new Date(state.closesAt);
  const due = new Date(Math.max(closes.getTime() - beforeMs, ctx.now.getTime()));
  const dueLocal = formatLocal(due, ctx.rules.timezone);
  const notes: string[] = [];
  const tc = buildTemplateContext(rule, ctx, match);
  const id = `${rule.name}#window_closing`;
  actions.push({
    id,
    rule: rule.name,
    type: 'timer',
    delayMs: due.getTime() - ctx.now.getTime(),
    unless: ['message_in', 'agent_reply'],
    actions: rule.actions.flatMap((action, j) =>
      planAction(action, `${id}.${j}`, rule, ctx, tc, notes, false),
    ),
    dueAt: due.toISOString(),
    dueLocal,
    trigger: 'window_closing',
  });
  const reason = `${test.reason}; armed: fires ${dueLocal}, ${formatDuration(beforeMs)} before the ${ctx.rules.replyWindow.hours}-hour window closes (${formatLocal(closes, ctx.rules.timezone)}), unless the customer writes again or an agent replies`;
  return { rule: rule.name, status: 'matched', reason, notes, cooldownMs: null };
}

function notMatched(rule: CompiledRule, reason: string): RuleOutcome {
  return { rule: rule.name, status: 'not_matched', reason, notes: [], cooldownMs: null };
}

function parseInstant(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

function buildTemplateContext(rule: CompiledRule, ctx: EvalContext, match: MatchInfo): TemplateContext {
  const window = replyWindow(ctx.rules, ctx.event.channel, ctx.lastCustomerMessageAt, ctx.now);
  return {
    event: ctx.event,
    rule: { name: rule.name },
    match: { keyword: match.keyword, keywords: match.keywords.join(', '), regexMatch: match.regexMatch },
    customer: { name: customerName(ctx.event) },
    window: {
      closedFor:
        window.closedForMs === null ? (window.applies ? 'unknown' : '') : formatDuration(window.closedForMs),
      hours: ctx.rules.replyWindow.hours,
    },
    conversation: { id: ctx.event.conversationId },
    burst: ctx.burst
      ? { count: ctx.burst.count, text: burstText(ctx.burst), firstAt: ctx.burst.firstAt }
      : undefined,
    get tags() {
      return renderTags(tagView(ctx));
    },
  };
}

/**
 * One configured action as planned actions. A reply whose window is already closed becomes the
 * when_closed actions (only at the top level: a timer's reply is re-checked when it fires).
 */
function planAction(
  action: CompiledAction,
  id: string,
  rule: CompiledRule,
  ctx: EvalContext,
  tc: TemplateContext,
  notes: string[],
  topLevel: boolean,
): PlannedAction[] {
  switch (action.type) {
    case 'note':
      return [{ id, rule: rule.name, type: 'note', text: renderTemplate(action.template, tc) }];
    case 'need_human':
      return [{ id, rule: rule.name, type: 'need_human' }];
    case 'forward': {
      const tags = topLevel && ctx.rules.usesTags ? { tags: sortedNames(tagView(ctx)) } : {};
      return [{ id, rule: rule.name, type: 'forward', destination: action.destination, ...tags }];
    }
    case 'tag': {
      // A timer's tags count their for: from when it fires (the worker), the event's from now.
      const expiresAt =
        topLevel && action.forMs !== null
          ? { expiresAt: new Date(ctx.now.getTime() + action.forMs).toISOString() }
          : {};
      return [
        { id, rule: rule.name, type: 'tag', tags: [...action.tags], forMs: action.forMs, ...expiresAt },
      ];
    }
    case 'untag':
      return [{ id, rule: rule.name, type: 'untag', tags: [...action.tags] }];
    case 'after': {
      const children = action.actions.flatMap((child, j) =>
        planAction(child, `${id}.${j}`, rule, ctx, tc, notes, false),
      );
      const timer: PlannedAction = {
        id,
        rule: rule.name,
        type: 'timer',
        delayMs: action.delayMs,
        unless: action.unless,
        actions: children,
      };
      if (action.clock !== 'business') return [timer];
      const hours = ctx.rules.businessHours;
      const due = hours ? addBusinessTime(hours, ctx.now, action.delayMs) : null;
      if (due === null) {
        notes.push(
          `action ${id} (timer): business hours never open in the next two years; counted ${formatDuration(action.delayMs)} of wall-clock time instead`,
        );
        return [timer];
      }
      const dueLocal = formatLocal(due, ctx.rules.timezone);
      notes.push(
        `action ${id} (timer): ${formatDuration(action.delayMs)} of business hours: due ${dueLocal}`,
      );
      return [
        {
          ...timer,
          delayMs: due.getTime() - ctx.now.getTime(),
          dueAt: due.toISOString(),
          dueLocal,
          clock: 'business',
          businessMs: action.delayMs,
        },
      ];
    }
    case 'reply': {
      const state = replyWindow(ctx.rules, ctx.event.channel, ctx.lastCustomerMessageAt, ctx.now);
      const closedNow = topLevel && state.applies && !state.open;
      // Planned in the reply's place now, their tags are seen by the actions after them.
      const whenClosed = ctx.rules.replyWindow.whenClosed.flatMap((closedAction, j) => {
        const list = planAction(closedAction, `${id}~closed.${j}`, rule, ctx, tc, notes, false);
        return closedNow ? applyPlanned(ctx, list) : list;
      });
      if (closedNow) {
        const since =
          state.closedForMs === null
            ? 'no customer message known'
            : `closed ${formatDuration(state.closedForMs)} ago`;
        notes.push(
          `action ${id} (reply): the ${ctx.rules.replyWindow.hours}-hour reply window of this ${state.channelKind} conversation is closed (${since}); when_closed actions planned instead`,
        );
        ctx.blockedReplies.push({ rule: rule.name, actionId: id });
        return whenClosed;
      }
      const window: ReplyWindowPlan = {
        applies: state.applies,
        channelKind: state.channelKind,
        hours: ctx.rules.replyWindow.hours,
        closesAt: state.closesAt,
      };
      const message = action.media
        ? {
            media: {
              url: action.media.url,
              type: action.media.type,
              ...(action.media.name !== undefined ? { name: action.media.name } : {}),
              ...(action.media.caption !== undefined
                ? { caption: renderTemplate(action.media.caption, tc) }
                : {}),
              ...(action.media.mimeType !== undefined ? { mimeType: action.media.mimeType } : {}),
            },
          }
        : { text: action.text ? renderTemplate(action.text, tc) : '' };
      return [
        {
          id,
          rule: rule.name,
          type: 'reply',
          message,
          replyToMessageId: action.replyToMessage ? ctx.event.messageId : null,
          once: action.onceMs !== null ? { key: id, ttlMs: action.onceMs } : null,
          window,
          whenClosed,
        },
      ];
    }
  }
}

function evaluateCondition(cond: CompiledCondition, ctx: EvalContext, match: MatchInfo): TestResult {
  switch (cond.type) {
    case 'all': {
      const reasons: string[] = [];
      for (const item of cond.items) {
        const result = evaluateCondition(item, ctx, match);
        if (!result.ok) return result;
        reasons.push(result.reason);
      }
      return { ok: true, reason: reasons.join('; ') };
    }
    case 'any': {
      const reasons: string[] = [];
      for (const item of cond.items) {
        const result = evaluateCondition(item, ctx, match);
        if (result.ok) return { ok: true, reason: `any: ${result.reason}` };
        reasons.push(result.reason);
      }
      return { ok: false, reason: `none of any: matched (${reasons.join('; ')})` };
    }
    case 'not': {
      // Match details found under `not` describe what did not happen; do not leak them.
      const scratch: MatchInfo = {
        keyword: '',
        keywordPosition: Number.POSITIVE_INFINITY,
        keywords: [],
        regexMatch: '',
      };
      const result = evaluateCondition(cond.item, ctx, scratch);
      return result.ok
        ? { ok: false, reason: `not: ${result.reason}` }
        : { ok: true, reason: `not: ${result.reason}` };
    }
    case 'field':
      return fieldTest(cond.field, cond.values, cond.normalized, ctx.event);
    case 'flag':
      return flagTest(cond.flag, cond.value, ctx);
    case 'business_hours': {
      if (!ctx.rules.businessHours) return { ok: false, reason: 'no business hours configured' };
      const at = businessHoursInstant(ctx.event, ctx.now);
      ctx.hours ??= businessHoursAt(ctx.rules.businessHours, at);
      const state = ctx.hours.open ? 'open' : 'closed';
      const reason =
        ctx.now.getTime() - at.getTime() < SAME_MOMENT_MS
          ? `business hours are ${state} (${ctx.hours.label})`
          : `business hours were ${state} when the message was written (${ctx.hours.label})`;
      return { ok: state === cond.want, reason };
    }
    case 'keywords': {
      const hits = cond.keywords.filter((k) => ctx.found.has(k.id));
      if (cond.mode === 'any' ? hits.length === 0 : hits.length < cond.keywords.length) {
        if (cond.mode === 'any') {
          return {
            ok: false,
            reason: `text has none of the keywords ${listForReason(cond.keywords.map((k) => k.text))}`,
          };
        }
        const missing = cond.keywords.filter((k) => !ctx.found.has(k.id)).map((k) => k.text);
        return { ok: false, reason: `text lacks the keywords ${listForReason(missing)} of all_keywords` };
      }
      for (const hit of hits) {
        const position = ctx.found.get(hit.id) ?? Number.POSITIVE_INFINITY;
        if (position < match.keywordPosition) {
          match.keywordPosition = position;
          match.keyword = hit.text;
        }
        if (!match.keywords.includes(hit.text)) match.keywords.push(hit.text);
      }
      const shown = hits.map((h) => `'${h.text}'`).join(', ');
      return { ok: true, reason: `text has keyword${hits.length > 1 ? 's' : ''} ${shown}` };
    }
    case 'tags':
      return tagsTest(cond.mode, cond.tags, tagView(ctx));
    case 'regex': {
      const matcher = cond.re.matcher(ctx.text);
      if (!matcher.find()) return { ok: false, reason: `text does not match regex /${cond.source}/` };
      const matched = matcher.group(0) ?? '';
      if (match.regexMatch === '') match.regexMatch = matched;
      return { ok: true, reason: `text matches regex /${cond.source}/ ("${truncate(matched, 40)}")` };
    }
  }
}

const FIELD_LABEL = {
  engine: 'channel engine',
  channel_id: 'channel id',
  channel_name: 'channel name',
  sender: 'sender',
  content_type: 'content type',
} as const;

function fieldTest(
  field: keyof typeof FIELD_LABEL,
  values: readonly string[],
  normalized: ReadonlySet<string>,
  event: ConversationEvent,
): TestResult {
  const raw =
    field === 'engine'
      ? event.channel.engine
      : field === 'channel_id'
        ? event.channel.id
        : field === 'channel_name'
          ? event.channel.name
          : field === 'sender'
            ? event.senderName
            : event.contentType;
  const actual = raw ?? '';
  const key = field === 'channel_id' ? actual : actual.trim().toLowerCase();
  const shown = raw === null ? 'not given' : `"${truncate(actual, 40)}"`;
  const wanted = values.length === 1 ? `"${values[0]}"` : listForReason(values.map((v) => `"${v}"`));
  // `engine: waba` names the platform's raw engine, `engine: whatsapp` the normalised one: either
  // matches (`wa` and `waba` both normalise to whatsapp).
  const rawEngine = field === 'engine' ? (event.channel.rawEngine ?? null) : null;
  const hit = normalized.has(key) || (rawEngine !== null && normalized.has(rawEngine));
  const shownRaw = rawEngine !== null && rawEngine !== key ? ` (raw "${truncate(rawEngine, 40)}")` : '';
  return hit
    ? { ok: true, reason: `${FIELD_LABEL[field]} is ${shown}${shownRaw}` }
    : { ok: false, reason: `${FIELD_LABEL[field]} is ${shown}${shownRaw}, rule wants ${wanted}` };
}

function flagTest(
  flag: 'has_media' | 'need_human' | 'first_message',
  want: boolean,
  ctx: EvalContext,
): TestResult {
  let actual: boolean;
  let yes: string;
  let no: string;
  if (flag === 'has_media') {
    actual =
      ctx.burst?.hasMedia ??
      (ctx.event.attachments.length > 0 ||
        ['image', 'video', 'audio', 'document'].includes(ctx.event.contentType));
    yes = ctx.burst ? 'a message of the burst has media' : 'the message has media';
    no = ctx.burst ? 'no message of the burst has media' : 'the message has no media';
  } else if (flag === 'need_human') {
    actual = ctx.event.needHuman;
    yes = 'the conversation is marked need_human';
    no = 'the conversation is not marked need_human';
  } else {
    actual = ctx.facts.isFirstCustomerMessage;
    yes = "this is the customer's first message";
    no = "this is not the customer's first message";
  }
  return { ok: actual === want, reason: actual ? yes : no };
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a rule's conditions found, before they ran. */
function emptyMatch(): MatchInfo {
  return { keyword: '', keywordPosition: Number.POSITIVE_INFINITY, keywords: [], regexMatch: '' };
}
