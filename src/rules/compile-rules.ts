import { RE2JS } from 're2js';
import { formatDuration } from '../base/duration.js';
import { EVENT_KINDS, type EventKind } from '../events/conversation-event.js';
import { type BurstSettings, describeBurstSettings } from './burst.js';
import { type BusinessHours, compileBusinessHours } from './business-hours.js';
import { engineMatchValues } from './engine-values.js';
import { createKeywordIndexBuilder, type KeywordIndex, type KeywordIndexBuilder } from './keyword-index.js';
import type { RuleOutcome } from './plan.js';
import type { ActionConfig, ConditionConfig, TimerClock } from './rule-schema.js';
import type { ChannelConfig, ChannelKind, RuleConfig, RulesSettings } from './rules-settings-schema.js';
import { TAG_MODES, type TagMode } from './tags.js';
import { type CompiledTemplate, compileTemplate } from './template.js';

/**
 * Turns validated rule config into data the evaluator can run quickly: conditions as trees,
 * templates pre-parsed, regexes compiled (RE2, linear time), and every keyword of every rule in
 * one index. Also checks what only the whole config can tell: destinations exist, template
 * fields exist and have a value source, business hours are configured where used.
 */

export type FieldName = 'engine' | 'channel_id' | 'channel_name' | 'sender' | 'content_type';

export type CompiledCondition =
  | { type: 'all'; items: CompiledCondition[] }
  | { type: 'any'; items: CompiledCondition[] }
  | { type: 'not'; item: CompiledCondition }
  | { type: 'field'; field: FieldName; values: string[]; normalized: ReadonlySet<string> }
  | { type: 'flag'; flag: 'has_media' | 'need_human' | 'first_message'; value: boolean }
  | { type: 'business_hours'; want: 'open' | 'closed' }
  | { type: 'keywords'; mode: 'any' | 'all'; keywords: { id: number; text: string }[] }
  | { type: 'regex'; source: string; re: RE2JS }
  | { type: 'tags'; mode: TagMode; tags: string[] };

export type CompiledAction =
  | { type: 'note'; template: CompiledTemplate }
  | { type: 'need_human' }
  | {
      type: 'reply';
      text: CompiledTemplate | null;
      media: {
        url: string;
        type: 'image' | 'video' | 'audio' | 'document';
        name: string | undefined;
        caption: CompiledTemplate | undefined;
        mimeType: string | undefined;
      } | null;
      onceMs: number | null;
      replyToMessage: boolean;
    }
  | { type: 'forward'; destination: string }
  | { type: 'tag'; tags: string[]; forMs: number | null }
  | { type: 'untag'; tags: string[] }
  | {
      type: 'after';
      delayMs: number;
      unless: EventKind[];
      clock: TimerClock;
      actions: CompiledAction[];
    };

export interface CompiledRule {
  index: number;
  name: string;
  on: ReadonlySet<EventKind>;
  onText: string;
  /** `on: window_closing`: fires this long before the reply window closes; null for event rules. */
  windowClosingBeforeMs: number | null;
  condition: CompiledCondition | null;
  actions: CompiledAction[];
  stop: boolean;
  cooldownMs: number | null;
  /** Keyword ids of which at least one must be in the text for the rule to match; null: no such gate. */
  gate: number[] | null;
  /** `debounce:`: evaluated once per burst of customer messages, never per message; null otherwise. */
  burst: BurstSettings | null;
}

interface KindTable {
  /** Outcome of each rule when it is not evaluated (wrong kind, or none of its gate keywords). */
  defaults: RuleOutcome[];
  /** Rules of this kind without a keyword gate: always evaluated. */
  always: number[];
  /** Keyword id -> rules of this kind gated on it. */
  gated: Map<number, number[]>;
}

export interface CompiledRules {
  timezone: string;
  businessHours: BusinessHours | null;
  channels: readonly ChannelConfig[];
  replyWindow: { appliesTo: readonly ChannelKind[]; hours: number; whenClosed: CompiledAction[] };
  keywordIndex: KeywordIndex;
  rules: CompiledRule[];
  /** Indexes of the `on: window_closing` rules (armed by each customer message). */
  windowClosing: number[];
  /** Indexes of the debounced rules, whose bursts each customer message joins. */
  bursts: number[];
  byKind: Readonly<Record<EventKind, KindTable>>;
  /**
   * Some rule tests, sets or shows tags (rules/tags.ts): forwards then carry the tags as planned.
   * False: nothing about tags costs anything per event.
   */
  usesTags: boolean;
}

export interface CompileProblem {
  path: (string | number)[];
  message: string;
}

type Path = (string | number)[];

/**
 * What every pass shares: the whole config, the keyword index being built (keywords get their ids
 * in the order the rules name them) and the problems found so far, in the order they are found.
 */
interface CompileContext {
  readonly config: RulesSettings;
  readonly destinations: readonly string[];
  readonly keywords: KeywordIndexBuilder;
  readonly problems: CompileProblem[];
}

/** A template of an action; its `match.*` fields are checked against the rule's tests (`uses`). */
function compileActionTemplate(
  source: string,
  at: Path,
  uses: ConditionUses | null,
  problems: CompileProblem[],
): CompiledTemplate | undefined {
  const compiled = compileTemplate(source);
  if ('errors' in compiled) {
    for (const message of compiled.errors)
      problems.push({ path: at, message: `${at.join('.')}: ${message}` });
    return undefined;
  }
  if (uses) checkMatchFields(compiled, at, uses, problems, null);
  return compiled;
}

function compileReply(
  r: Extract<ActionConfig, { type: 'reply' }>['reply'],
  path: Path,
  uses: ConditionUses | null,
  problems: CompileProblem[],
): CompiledAction {
  const text =
    r.text !== undefined
      ? compileActionTemplate(r.text, [...path, 'reply', 'text'], uses, problems)
      : undefined;
  const caption =
    r.media?.caption !== undefined
      ? compileActionTemplate(r.media.caption, [...path, 'reply', 'media', 'caption'], uses, problems)
      : undefined;
  return {
    type: 'reply',
    text: text ?? null,
    media: r.media
      ? {
          url: r.media.url,
          type: r.media.type,
          name: r.media.name,
          caption,
          mimeType: r.media.mimeType,
        }
      : null,
    onceMs: r.oncePerConversationMs ?? null,
    replyToMessage: r.replyToMessage,
  };
}

/** One action (an `after`'s actions too); null, with the problem recorded, when it cannot run. */
function compileAction(
  action: ActionConfig,
  path: Path,
  uses: ConditionUses | null,
  ctx: CompileContext,
): CompiledAction | null {
  const { config, destinations, problems } = ctx;
  switch (action.type) {
    case 'note': {
      const t = compileActionTemplate(action.text, [...path, 'note'], uses, problems);
      return t ? { type: 'note', template: t } : null;
    }
    case 'need_human':
      return { type: 'need_human' };
    case 'forward':
      if (!destinations.includes(action.destination)) {
        problems.push({
          path: [...path, 'forward'],
          message: `${[...path, 'forward'].join('.')}: unknown destination "${action.destination}": define it under destinations:${destinations.length > 0 ? ` (defined: ${destinations.join(', ')})` : ''}`,
        });
        return null;
      }
      return { type: 'forward', destination: action.destination };
    case 'tag':
      return { type: 'tag', tags: action.tags, forMs: action.forMs };
    case 'untag':
      return { type: 'untag', tags: action.tags };
    case 'reply':
      return compileReply(action.reply, path, uses, problems);
    case 'after':
      if (action.clock === 'business' && !config.businessHours) {
        problems.push({
          path: [...path, 'clock'],
          message: `${[...path, 'clock'].join('.')}: clock: business counts open business hours, but the config has no business_hours section; add one with weekly: hours`,
        });
      }
      return {
        type: 'after',
        delayMs: action.delayMs,
        unless: action.unless,
        clock: action.clock,
        actions: compileActions(action.actions, path, uses, ctx),
      };
  }
}

/** The actions of a rule or of an `after` (`<path>.then.<j>`), those that can run. */
function compileActions(
  actions: readonly ActionConfig[],
  path: Path,
  uses: ConditionUses | null,
  ctx: CompileContext,
): CompiledAction[] {
  return actions
    .map((action, j) => compileAction(action, [...path, 'then', j], uses, ctx))
    .filter((a): a is CompiledAction => a !== null);
}

/** reply_window.when_closed: checked once without a rule; `match.*` is checked per rule (compileRule). */
function compileWhenClosed(ctx: CompileContext): CompiledAction[] {
  const whenClosed: CompiledAction[] = [];
  ctx.config.replyWindow.whenClosed.forEach((action, k) => {
    const path: Path = ['reply_window', 'when_closed', k];
    if (action.type === 'reply') {
      ctx.problems.push({
        path: [...path, 'reply'],
        message: `${path.join('.')}.reply: when_closed runs because a reply cannot be sent; use note, need_human or forward`,
      });
      return;
    }
    const compiled = compileAction(action, path, null, ctx);
    if (compiled) whenClosed.push(compiled);
  });
  return whenClosed;
}

/** A rule that replies may run when_closed's actions: their `match.*` fields need this rule's tests. */
function checkWhenClosedFor(rule: RuleConfig, uses: ConditionUses, ctx: CompileContext): void {
  ctx.config.replyWindow.whenClosed.forEach((action, k) => {
    const at: Path = ['reply_window', 'when_closed', k];
    for (const [source, p] of actionTemplates(action, at)) {
      const compiled = compileTemplate(source);
      if (!('errors' in compiled)) checkMatchFields(compiled, p, uses, ctx.problems, rule.name);
    }
  });
}

/** One rule: unique name, condition, actions, then what only the whole config can tell about it. */
function compileRule(
  rule: RuleConfig,
  index: number,
  seenNames: Map<string, number>,
  ctx: CompileContext,
): CompiledRule {
  const { config, keywords, problems } = ctx;
  const path: Path = ['rules', index];
  const earlier = seenNames.get(rule.name);
  if (earlier !== undefined) {
    problems.push({
      path: [...path, 'name'],
      message: `rules.${index}.name: "${rule.name}" is already the name of rules.${earlier}: names must be unique (they key once-marks and cooldowns)`,
    });
  } else {
    seenNames.set(rule.name, index);
  }
  const uses: ConditionUses = { keywords: false, regex: false, burst: rule.burst !== undefined };
  const condition = rule.if
    ? compileCondition(rule.if, [...path, 'if'], { config, keywords, problems, uses })
    : null;
  const actions = compileActions(rule.actions, path, uses, ctx);
  if (hasReply(actions)) checkWhenClosedFor(rule, uses, ctx);
  const on = new Set(rule.on.filter((kind): kind is EventKind => kind !== 'window_closing'));
  const windowClosingBeforeMs = rule.on.includes('window_closing') ? (rule.beforeMs ?? 0) : null;
  checkClockRule(rule, index, windowClosingBeforeMs, config, problems);
  return {
    index,
    name: rule.name,
    on,
    onText: rule.on.join(', '),
    windowClosingBeforeMs,
    condition,
    actions,
    stop: rule.stop,
    cooldownMs: rule.cooldownMs ?? null,
    gate: condition ? keywordGate(condition) : null,
    burst: rule.burst ?? null,
  };
}

/**
 * The passes: reply_window.when_closed, then each rule in order (which fills the keyword index),
 * then the keyword index and, per event kind, which rules to evaluate. Problems come in that order.
 */
export function compileRules(config: RulesSettings): { rules: CompiledRules; problems: CompileProblem[] } {
  const ctx: CompileContext = {
    config,
    destinations: Object.keys(config.destinations),
    keywords: createKeywordIndexBuilder(),
    problems: [],
  };
  const whenClosed = compileWhenClosed(ctx);
  const seenNames = new Map<string, number>();
  const rules: CompiledRule[] = config.rules.map((rule, index) => compileRule(rule, index, seenNames, ctx));

  const keywordIndex = ctx.keywords.build();
  const byKind = Object.fromEntries(
    EVENT_KINDS.map((kind) => [kind, buildKindTable(kind, rules, keywordIndex)]),
  ) as Record<EventKind, KindTable>;

  return {
    rules: {
      timezone: config.timezone,
      businessHours: config.businessHours
        ? compileBusinessHours(config.businessHours.weekly, config.businessHours.holidays, config.timezone)
        : null,
      channels: config.channels,
      replyWindow: { appliesTo: config.replyWindow.appliesTo, hours: config.replyWindow.hours, whenClosed },
      keywordIndex,
      rules,
      windowClosing: rules.filter((r) => r.windowClosingBeforeMs !== null).map((r) => r.index),
      bursts: rules.filter((r) => r.burst !== null).map((r) => r.index),
      byKind,
      usesTags: rules.some(ruleUsesTags) || whenClosed.some(actionUsesTags),
    },
    problems: ctx.problems,
  };
}

/** Kinds of events that may be the platform's echo of the bridge's own sends. */
const ECHO_KINDS: readonly string[] = ['agent_reply', 'message_sent'];

/**
 * What only the whole config tells about clocks and loops: a window_closing rule fires
 * before a window of reply_window.hours and cannot nest timers (it is a timer); a rule on the
 * events a platform may send back for the bridge's own messages must not reply, or it could
 * answer itself forever.
 */
function checkClockRule(
  rule: RuleConfig,
  index: number,
  beforeMs: number | null,
  config: RulesSettings,
  problems: CompileProblem[],
): void {
  const path: Path = ['rules', index];
  if (beforeMs !== null) {
    const windowMs = config.replyWindow.hours * 3_600_000;
    if (beforeMs >= windowMs) {
      problems.push({
        path: [...path, 'before'],
        message: `rules.${index}.before: ${formatDuration(beforeMs)} is not shorter than the ${config.replyWindow.hours}-hour reply window (reply_window.hours): the rule could never fire before it closes; use a shorter before:`,
      });
    }
    rule.actions.forEach((action, j) => {
      if (action.type === 'after') {
        problems.push({
          path: [...path, 'then', j, 'after'],
          message: `rules.${index}.then.${j}.after: a window_closing rule is already a timer: its actions run when it fires; remove after: or move it to a rule on message_in`,
        });
      }
    });
  }
  const echoKinds = rule.on.filter((kind) => ECHO_KINDS.includes(kind));
  if (echoKinds.length > 0 && rule.actions.some((a) => replies(a))) {
    problems.push({
      path: [...path, 'then'],
      message: `rules.${index}: rule "${rule.name}" is on ${echoKinds.join(', ')} and replies: a platform that reports the bridge's own sends as ${echoKinds.join('/')} would make it answer its own reply; use note, need_human or forward, or put the reply on message_in`,
    });
  }
}

function replies(action: ActionConfig): boolean {
  return action.type === 'reply' || (action.type === 'after' && action.actions.some(replies));
}

interface ConditionUses {
  keywords: boolean;
  regex: boolean;
  /** The rule is debounced: `{{burst.*}}` has a value. */
  burst: boolean;
}

interface ConditionContext {
  config: RulesSettings;
  keywords: KeywordIndexBuilder;
  problems: CompileProblem[];
  uses: ConditionUses;
}

const FIELD_KEYS: readonly FieldName[] = ['engine', 'channel_id', 'channel_name', 'sender', 'content_type'];

function normalizeValue(field: FieldName, value: string): string {
  return field === 'channel_id' ? value : value.trim().toLowerCase();
}

function compileCondition(cond: ConditionConfig, path: Path, ctx: ConditionContext): CompiledCondition {
  const items: CompiledCondition[] = [];
  for (const field of FIELD_KEYS) {
    const values = cond[field];
    if (values) {
      items.push({
        type: 'field',
        field,
        values,
        // `engine: messenger` also matches events whose (normalised) engine is facebook.
        normalized: new Set(
          values.flatMap((v) => (field === 'engine' ? engineMatchValues(v) : [normalizeValue(field, v)])),
        ),
      });
    }
  }
  for (const flag of ['has_media', 'need_human', 'first_message'] as const) {
    const value = cond[flag];
    if (value !== undefined) items.push({ type: 'flag', flag, value });
  }
  if (cond.business_hours !== undefined) {
    if (!ctx.config.businessHours) {
      ctx.problems.push({
        path: [...path, 'business_hours'],
        message: `${[...path, 'business_hours'].join('.')}: the config has no business_hours section; add one with weekly: hours`,
      });
    }
    items.push({ type: 'business_hours', want: cond.business_hours });
  }
  if (cond.text) {
    const { any_keywords, all_keywords, regex } = cond.text;
    for (const [mode, list] of [
      ['any', any_keywords],
      ['all', all_keywords],
    ] as const) {
      if (!list) continue;
      ctx.uses.keywords = true;
      items.push({
        type: 'keywords',
        mode,
        keywords: list.map((text) => ({ id: ctx.keywords.add(text), text })),
      });
    }
    if (regex !== undefined) {
      ctx.uses.regex = true;
      items.push({ type: 'regex', source: regex, re: RE2JS.compile(regex) });
    }
  }
  if (cond.tags) {
    for (const mode of TAG_MODES) {
      const tags = cond.tags[mode];
      if (tags) items.push({ type: 'tags', mode, tags: [...new Set(tags)] });
    }
  }
  if (cond.all)
    items.push({ type: 'all', items: cond.all.map((c, k) => compileCondition(c, [...path, 'all', k], ctx)) });
  if (cond.any)
    items.push({ type: 'any', items: cond.any.map((c, k) => compileCondition(c, [...path, 'any', k], ctx)) });
  if (cond.not) items.push({ type: 'not', item: compileCondition(cond.not, [...path, 'not'], ctx) });
  const only = items[0];
  return items.length === 1 && only ? only : { type: 'all', items };
}

/**
 * Keywords of which at least one must occur for the condition to hold, or null when it can hold
 * without any (a `not`, a field test alone). Lets the evaluator skip most rules of a large set
 * by one index lookup.
 */
function keywordGate(cond: CompiledCondition): number[] | null {
  switch (cond.type) {
    case 'keywords':
      return cond.keywords.map((k) => k.id);
    case 'all': {
      let best: number[] | null = null;
      for (const item of cond.items) {
        const gate = keywordGate(item);
        if (gate && (best === null || gate.length < best.length)) best = gate;
      }
      return best;
    }
    case 'any': {
      const union = new Set<number>();
      for (const item of cond.items) {
        const gate = keywordGate(item);
        if (!gate) return null;
        for (const id of gate) union.add(id);
      }
      return [...union];
    }
    default:
      return null;
  }
}

const MAX_LISTED = 8;

/** "[refund, komplain, kecewa]" or "[a, b, ... (+12 more)]". */
export function listForReason(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `[${shown}, ... (+${items.length - MAX_LISTED} more)]` : `[${shown}]`;
}

function buildKindTable(kind: EventKind, rules: readonly CompiledRule[], index: KeywordIndex): KindTable {
  const defaults: RuleOutcome[] = [];
  const always: number[] = [];
  const gated = new Map<number, number[]>();
  for (const rule of rules) {
    if (!rule.on.has(kind)) {
      defaults.push(
        Object.freeze({
          rule: rule.name,
          status: 'not_matched',
          reason: `event kind is ${kind}, rule is on ${rule.onText}`,
          notes: [],
          cooldownMs: null,
        }),
      );
    } else if (rule.burst) {
      // Never evaluated per message: each customer message joins the rule's burst.
      defaults.push(
        Object.freeze({
          rule: rule.name,
          status: 'not_matched',
          reason: `debounced (${describeBurstSettings(rule.burst)}): this message joins the rule's burst, evaluated once when the burst ends`,
          notes: [],
          cooldownMs: null,
          debounced: true,
        }),
      );
    } else if (rule.gate) {
      const phrases = rule.gate.map((id) => index.phrases[id] ?? '');
      defaults.push(
        Object.freeze({
          rule: rule.name,
          status: 'not_matched',
          reason: `text has none of the keywords ${listForReason(phrases)}`,
          notes: [],
          cooldownMs: null,
        }),
      );
      for (const id of rule.gate) {
        const list = gated.get(id);
        if (list) list.push(rule.index);
        else gated.set(id, [rule.index]);
      }
    } else {
      defaults.push(
        Object.freeze({
          rule: rule.name,
          status: 'not_matched',
          reason: 'not evaluated',
          notes: [],
          cooldownMs: null,
        }),
      );
      always.push(rule.index);
    }
  }
  return { defaults, always, gated };
}

function conditionUsesTags(cond: CompiledCondition): boolean {
  if (cond.type === 'tags') return true;
  if (cond.type === 'all' || cond.type === 'any') return cond.items.some(conditionUsesTags);
  return cond.type === 'not' && conditionUsesTags(cond.item);
}

function actionUsesTags(action: CompiledAction): boolean {
  switch (action.type) {
    case 'tag':
    case 'untag':
      return true;
    case 'after':
      return action.actions.some(actionUsesTags);
    case 'note':
      return action.template.fields.includes('tags');
    case 'reply':
      return [action.text, action.media?.caption].some((t) => t?.fields.includes('tags') === true);
    default:
      return false;
  }
}

function ruleUsesTags(rule: CompiledRule): boolean {
  return (rule.condition !== null && conditionUsesTags(rule.condition)) || rule.actions.some(actionUsesTags);
}

function hasReply(actions: readonly CompiledAction[]): boolean {
  return actions.some((a) => a.type === 'reply' || (a.type === 'after' && hasReply(a.actions)));
}

function actionTemplates(action: ActionConfig, path: Path): [string, Path][] {
  if (action.type === 'note') return [[action.text, [...path, 'note']]];
  return [];
}

function checkMatchFields(
  template: CompiledTemplate,
  path: Path,
  uses: ConditionUses,
  problems: CompileProblem[],
  ruleName: string | null,
): void {
  const forRule = ruleName ? ` (used by rule "${ruleName}", which replies)` : '';
  for (const field of template.fields) {
    if ((field === 'match.keyword' || field === 'match.keywords') && !uses.keywords) {
      problems.push({
        path,
        message: `${path.join('.')}: {{${field}}} needs a keyword test (text: any_keywords or all_keywords) in the rule's if${forRule}`,
      });
    }
    if (field === 'match.regex_match' && !uses.regex) {
      problems.push({
        path,
        message: `${path.join('.')}: {{${field}}} needs a text: regex test in the rule's if${forRule}`,
      });
    }
    if (field.startsWith('burst.') && !uses.burst) {
      problems.push({
        path,
        message: `${path.join('.')}: {{${field}}} needs a debounced rule (debounce: DURATION on a message_in rule)${forRule}`,
      });
    }
  }
}
