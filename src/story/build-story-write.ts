import { customersIn } from '../base/customer-match.js';
import { maskPersonalData } from '../base/personal-data.js';
import type { StorySettings } from '../config/config-schema.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { customerName } from '../events/conversation-event.js';
import type { PlannedAction, RuleOutcome } from '../rules/plan.js';
import type { ActionOutcome, StoryEntry, StoryOutcome } from './story-schema.js';
import { customerTerm, nameTerm, nameWords, outcomeTerm, ruleTerm, tagTerm } from './story-terms.js';

/**
 * What one finish step adds to a conversation's story: entries to append, search terms the
 * conversation joins, fields of its summary to set or delete, and counts for the hour's stats
 * bucket. Built here (pure) from what the worker holds when it finishes; written by the Lua of
 * story-lua.ts inside the finish step's own script.
 */
export interface StoryWrite {
  /** JSON of StoryEntry, oldest first. */
  entries: string[];
  terms: string[];
  metaSet: Record<string, string>;
  metaDel: string[];
  /** Stats bucket fields (STATS_FIELDS) and how much to add to each. */
  stats: Record<string, number>;
  /** The event was a need_human done: time to the first agent reply counts from now. */
  escalated: boolean;
  /** The event was a human agent's reply: it ends the wait for one. */
  agentReply: boolean;
}

/** Fields of the summary hash (keys.storyMeta). */
export const META_FIELDS = {
  id: 'id',
  name: 'name',
  firstAt: 'firstAt',
  lastAt: 'lastAt',
  events: 'events',
  entries: 'entries',
  lastEvent: 'lastEvent',
  window: 'window',
  /** Phone digits -> as written. */
  phone: 'cp:',
  /** E-mail address -> as written. */
  email: 'ce:',
  rule: 'r:',
  outcome: 'o:',
  /** Tag -> ms it expires, '0' for never. */
  tag: 'g:',
  /** The term keys the conversation is in, newline-separated (forget removes it from each). */
  terms: 'ix',
  /** When the conversation was marked as needing a human and no agent has replied since. */
  needHumanAt: 'nh',
} as const;

/** Fields of an hour's stats bucket (keys.storyStats). */
export const STATS_FIELDS = {
  events: 'ev',
  /** Actions done, by type: `a:<type>`. */
  action: 'a:',
  escalations: 'esc',
  repliesBlocked: 'rb',
  deadLetters: 'dl',
  shadowDifferences: 'sd',
  /** Time to the first agent reply, a histogram: `fr:<bucket index>` (FIRST_REPLY_BUCKETS_MS). */
  firstReply: 'fr:',
} as const;

/** Upper bounds of the first-agent-reply histogram's buckets (ms); the last one is open. */
export const FIRST_REPLY_BUCKETS_MS = [
  30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
  86_400_000,
] as const;

/** What an event's finish step knows: the event, its plan and verdicts, and what its actions did. */
export interface EventStoryInput {
  event: ConversationEvent;
  now: number;
  /** The actions of the frozen plan. */
  actions: readonly PlannedAction[];
  /** The rules the frozen plan says matched (a re-run knows only these). */
  matched: readonly string[];
  /** Every rule's outcome, when this run evaluated the plan (absent for a re-run of a frozen plan). */
  outcomes?: readonly RuleOutcome[];
  /** Replies the rules replaced by `when_closed` because the window was closed when planning. */
  blockedAtPlanning?: number;
  /** What became of each action in this run (ActionReport). */
  reports: readonly {
    id: string;
    type: string;
    rule: string;
    state: 'done' | 'skipped' | 'failed';
    detail?: string;
  }[];
  cancelledTimers: readonly string[];
  /** The reply window after the event (null: unknown, or the channel has none). */
  windowOpenUntil: Date | null;
  windowApplies: boolean;
  /** Runs of the event it took, this one included. */
  attempts: number;
  ownSend: boolean;
  /** The event was dead-lettered (its last run failed for good): why. */
  deadLettered?: string;
  /** The id a timer action of this run gets (worker/timers timerIdFor); its action id when not given. */
  timerIdOf?: (actionId: string) => string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The event's text as `story.redact` allows it. */
function keptText(text: string, settings: StorySettings): { text: string | null; redacted: boolean } {
  const r = settings.redact;
  if (text === '') return { text: null, redacted: false };
  if (r.texts) return { text: null, redacted: true };
  if (!(r.phones || r.emails || r.cards || r.nationalIds)) return { text, redacted: false };
  const masked = maskPersonalData(text, r);
  return { text: masked, redacted: masked !== text };
}

function keptName(name: string | null, settings: StorySettings): string | null {
  const r = settings.redact;
  if (name === null || !(r.phones || r.emails || r.cards || r.nationalIds)) return name;
  return maskPersonalData(name, r);
}

/** `MATCH escalate: text has keyword 'refund'`, `no catalog: skipped, an earlier rule has stop`: explain's words. */
export function verdictWords(outcome: Pick<RuleOutcome, 'rule' | 'status' | 'reason' | 'debounced'>): string {
  const mark = outcome.status === 'matched' ? 'MATCH' : outcome.debounced ? 'burst' : 'no';
  return `${mark} ${outcome.rule}: ${outcome.reason}`;
}

/** A reply held back because the reply window was closed (exactly-once/action-life.ts says so in these words). */
const isWindowSkip = (report: EventStoryInput['reports'][number]) =>
  report.type === 'reply' && report.state === 'skipped' && (report.detail ?? '').includes('reply window');

function actionOutcome(state: 'done' | 'skipped' | 'failed', attempts: number): ActionOutcome {
  if (state === 'skipped') return 'skipped';
  if (state === 'failed') return 'dead_lettered';
  return attempts > 1 ? 'retried' : 'done';
}

/** The story entries, terms, summary fields and stats of one finished event. */
export function buildEventStory(input: EventStoryInput, settings: StorySettings): StoryWrite {
  const { event, now } = input;
  const at = iso(now);
  const eventKey = event.key;
  const entries: StoryEntry[] = [];
  const write: StoryWrite = {
    entries: [],
    terms: [],
    metaSet: {},
    metaDel: [],
    stats: { [STATS_FIELDS.events]: 1 },
    escalated: false,
    agentReply: event.kind === 'agent_reply',
  };
  const text = keptText(event.text !== '' ? event.text : event.caption, settings);
  entries.push({
    kind: 'event',
    at,
    eventKey,
    type: event.kind,
    name: event.name,
    senderName: keptName(event.senderName, settings),
    ...text,
    channel: event.channel.id ?? event.channel.engine,
    ...(input.ownSend ? { ownSend: true } : {}),
  });
  write.metaSet[META_FIELDS.lastEvent] = event.kind;
  addCustomer(event, write, settings);
  addVerdicts(input, entries, write, at);
  const outcomes = new Set<StoryOutcome>();
  if ((input.blockedAtPlanning ?? 0) > 0) {
    outcomes.add('reply_blocked');
    addStat(write, STATS_FIELDS.repliesBlocked, input.blockedAtPlanning ?? 0);
  }
  addActions(input, entries, write, outcomes, at);
  if (input.deadLettered !== undefined) {
    // The action whose call threw is not reported (only refusals are): the event's entry says it.
    if (!input.reports.some((report) => report.state === 'failed')) {
      entries.push({
        kind: 'action',
        at,
        eventKey,
        id: '',
        type: 'event',
        rule: '',
        outcome: 'dead_lettered',
        reason: 'the event was dead-lettered after its last attempt',
        attempts: input.attempts,
        error: input.deadLettered,
      });
    }
    outcomes.add('dead_letter');
    addStat(write, STATS_FIELDS.deadLetters, 1);
  }
  for (const timerId of input.cancelledTimers) {
    entries.push({
      kind: 'timer',
      at,
      eventKey,
      timerId,
      // A cancelled timer is known by its id only (its registration names no rule): see its pending entry.
      rule: '',
      state: 'cancelled',
      due: null,
      by: event.kind,
    });
  }
  if (input.windowApplies) {
    const openUntil = input.windowOpenUntil === null ? null : input.windowOpenUntil.toISOString();
    entries.push({ kind: 'window', at, eventKey, openUntil });
    write.metaSet[META_FIELDS.window] = openUntil ?? '';
  }
  for (const outcome of outcomes) {
    write.metaSet[`${META_FIELDS.outcome}${outcome}`] = '1';
    write.terms.push(outcomeTerm(outcome));
  }
  write.entries = entries.map((entry) => JSON.stringify(entry));
  return write;
}

function addStat(write: StoryWrite, field: string, n: number): void {
  write.stats[field] = (write.stats[field] ?? 0) + n;
}

function addCustomer(event: ConversationEvent, write: StoryWrite, settings: StorySettings): void {
  // Only what the customer wrote names the customer (an agent's reply may hold the shop's number).
  if (event.kind !== 'message_in') return;
  const name = customerName(event);
  if (name !== '') {
    write.metaSet[META_FIELDS.name] = keptName(name, settings) ?? '';
    for (const word of nameWords(name)) write.terms.push(nameTerm(word));
  }
  for (const text of [event.text, event.caption, event.senderName, event.conversationLabel]) {
    for (const customer of customersIn(text)) {
      const field =
        customer.kind === 'phone'
          ? `${META_FIELDS.phone}${customer.digits}`
          : `${META_FIELDS.email}${customer.address}`;
      write.metaSet[field] = customer.written;
      write.terms.push(customerTerm(customer));
    }
  }
}

function addVerdicts(input: EventStoryInput, entries: StoryEntry[], write: StoryWrite, at: string): void {
  const eventKey = input.event.key;
  if (input.outcomes) {
    for (const outcome of input.outcomes) {
      entries.push({
        kind: 'verdict',
        at,
        eventKey,
        rule: outcome.rule,
        matched: outcome.status === 'matched',
        ...(outcome.debounced ? { debounced: true } : {}),
        words: verdictWords(outcome),
      });
    }
  } else {
    // A re-run reads back the frozen plan, which keeps only the rules that matched.
    for (const rule of input.matched) {
      entries.push({
        kind: 'verdict',
        at,
        eventKey,
        rule,
        matched: true,
        words: `MATCH ${rule}: (from the frozen plan)`,
      });
    }
  }
  for (const rule of input.matched) {
    write.metaSet[`${META_FIELDS.rule}${rule}`] = '1';
    write.terms.push(ruleTerm(rule));
  }
}

function addActions(
  input: EventStoryInput,
  entries: StoryEntry[],
  write: StoryWrite,
  outcomes: Set<StoryOutcome>,
  at: string,
): void {
  const eventKey = input.event.key;
  const planned = new Map(input.actions.map((action) => [action.id, action]));
  for (const report of input.reports) {
    const outcome = actionOutcome(report.state, input.attempts);
    entries.push({
      kind: 'action',
      at,
      eventKey,
      id: report.id,
      type: report.type,
      rule: report.rule,
      outcome,
      reason: report.detail ?? null,
      attempts: input.attempts,
      error: report.state === 'failed' ? (report.detail ?? input.deadLettered ?? null) : null,
    });
    if (isWindowSkip(report)) {
      outcomes.add('reply_blocked');
      addStat(write, STATS_FIELDS.repliesBlocked, 1);
    }
    if (report.state === 'failed') outcomes.add('dead_letter');
    if (report.state !== 'done') continue;
    addStat(write, `${STATS_FIELDS.action}${report.type}`, 1);
    if (report.type === 'need_human') {
      outcomes.add('escalated');
      addStat(write, STATS_FIELDS.escalations, 1);
      write.escalated = true;
    }
    const action = planned.get(report.id);
    if (action) addActionEffects(action, input, entries, write, at);
  }
}

/** What a done action leaves in the conversation: tags set or removed, a timer pending. */
function addActionEffects(
  action: PlannedAction,
  input: Pick<EventStoryInput, 'now' | 'event' | 'timerIdOf'>,
  entries: StoryEntry[],
  write: StoryWrite,
  at: string,
): void {
  const { now } = input;
  const eventKey = input.event.key;
  if (action.type === 'tag') {
    const until =
      action.expiresAt !== undefined
        ? Date.parse(action.expiresAt)
        : action.forMs !== null
          ? now + action.forMs
          : null;
    for (const name of action.tags) {
      entries.push({ kind: 'tag', at, eventKey, name, until: until === null ? null : iso(until) });
      write.metaSet[`${META_FIELDS.tag}${name}`] = until === null ? '0' : String(until);
      write.terms.push(tagTerm(name));
    }
  } else if (action.type === 'untag') {
    for (const name of action.tags) {
      entries.push({ kind: 'tag', at, eventKey, name, until: null, removed: true });
      write.metaDel.push(`${META_FIELDS.tag}${name}`);
    }
  } else if (action.type === 'timer') {
    const due = action.dueAt ?? iso(now + action.delayMs);
    const by = action.unless.length > 0 ? `cancelled by ${action.unless.join(' or ')}` : null;
    entries.push({
      kind: 'timer',
      at,
      eventKey,
      timerId: input.timerIdOf?.(action.id) ?? action.id,
      rule: action.rule,
      state: 'pending',
      due,
      by,
    });
  }
}

/** What a fired timer's finish step knows. */
export interface TimerStoryInput {
  /** The event that set it. */
  event: ConversationEvent;
  timerId: string;
  /** The rule that set it. */
  rule: string;
  now: number;
  actions: readonly PlannedAction[];
  reports: EventStoryInput['reports'];
}

/** The story of a fired timer: it fired, and what its actions did. */
export function buildTimerStory(input: TimerStoryInput): StoryWrite {
  const at = iso(input.now);
  const entries: StoryEntry[] = [
    { kind: 'timer', at, timerId: input.timerId, rule: input.rule, state: 'fired', due: at, by: null },
  ];
  const write: StoryWrite = {
    entries: [],
    terms: [],
    metaSet: {},
    metaDel: [],
    stats: {},
    escalated: false,
    agentReply: false,
  };
  const outcomes = new Set<StoryOutcome>();
  const actionsInput = { ...input, attempts: 1 } as unknown as EventStoryInput;
  addActions(actionsInput, entries, write, outcomes, at);
  for (const outcome of outcomes) {
    write.metaSet[`${META_FIELDS.outcome}${outcome}`] = '1';
    write.terms.push(outcomeTerm(outcome));
  }
  write.entries = entries.map((entry) => JSON.stringify(entry));
  return write;
}
