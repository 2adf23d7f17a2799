import { formatDuration } from '../../base/duration.js';
import type { PlannedAction } from '../ports.js';

/**
 * Shadow rules: the active plan of an event against the candidate's, rule by rule.
 * Pure. A rule differs when it matched in one plan and not the other, or when its actions, as
 * rendered for this event (texts with their templates filled in, destinations, timers with their
 * delays and what they would run), are not the same list in the same order. Action ids are left
 * out: they number a rule's actions, so a rule that gained an action would otherwise differ in
 * every later action's id though it does the same.
 */

/** What the comparison reads of a plan (a fresh Plan or a FrozenPlan). */
export interface PlanSide {
  readonly matched: readonly { readonly rule: string }[];
  readonly actions: readonly PlannedAction[];
}

/** One side of a difference: whether the rule matched, and its actions as rendered. */
export interface RuleSide {
  matched: boolean;
  actions: string[];
}

export interface RuleDifference {
  rule: string;
  active: RuleSide;
  candidate: RuleSide;
}

export interface PlanComparison {
  /** The rules each plan matched, in its config order. */
  activeMatched: readonly string[];
  candidateMatched: readonly string[];
  /** The rules whose outcome differs: the active plan's order, then the candidate's own rules. */
  differences: RuleDifference[];
}

const NONE: readonly string[] = [];

export function comparePlans(active: PlanSide, candidate: PlanSide): PlanComparison {
  const activeMatched = active.matched.length === 0 ? NONE : active.matched.map((m) => m.rule);
  const candidateMatched = candidate.matched.length === 0 ? NONE : candidate.matched.map((m) => m.rule);
  // The common case, nothing matched on either side, costs no allocation beyond this.
  if (activeMatched.length === 0 && candidateMatched.length === 0) {
    return { activeMatched, candidateMatched, differences: [] };
  }
  const activeActions = actionsByRule(active.actions);
  const candidateActions = actionsByRule(candidate.actions);
  const rules = new Set([
    ...activeMatched,
    ...candidateMatched,
    ...activeActions.keys(),
    ...candidateActions.keys(),
  ]);
  const inActive = new Set(activeMatched);
  const inCandidate = new Set(candidateMatched);
  const differences: RuleDifference[] = [];
  for (const rule of rules) {
    const a: RuleSide = { matched: inActive.has(rule), actions: activeActions.get(rule) ?? [] };
    const c: RuleSide = { matched: inCandidate.has(rule), actions: candidateActions.get(rule) ?? [] };
    if (a.matched !== c.matched || !sameList(a.actions, c.actions)) {
      differences.push({ rule, active: a, candidate: c });
    }
  }
  return { activeMatched, candidateMatched, differences };
}

/** The plan's actions, rendered, grouped by the rule that planned them (when_closed replacements included). */
function actionsByRule(actions: readonly PlannedAction[]): Map<string, string[]> {
  const byRule = new Map<string, string[]>();
  for (const action of actions) {
    const list = byRule.get(action.rule);
    if (list) list.push(describeAction(action));
    else byRule.set(action.rule, [describeAction(action)]);
  }
  return byRule;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/**
 * One planned action in a line: what would be done, as rendered for the event. It is both what
 * the comparison compares and what `convo-bridge shadow report` shows.
 */
export function describeAction(action: PlannedAction): string {
  switch (action.type) {
    case 'note':
      return `note ${JSON.stringify(action.text)}`;
    case 'need_human':
      return 'need_human';
    case 'forward':
      return `forward ${action.destination}`;
    case 'tag':
      return `tag ${action.tags.join(', ')}${action.forMs === null ? '' : ` for ${formatDuration(action.forMs)}`}`;
    case 'untag':
      return `untag ${action.tags.join(', ')}`;
    case 'reply': {
      const to = action.replyToMessageId === null ? '' : ' (in reply to the message)';
      if ('text' in action.message) return `reply ${JSON.stringify(action.message.text)}${to}`;
      const { media } = action.message;
      const caption = media.caption === undefined ? '' : ` caption ${JSON.stringify(media.caption)}`;
      return `reply ${media.type} ${media.url}${caption}${to}`;
    }
    case 'timer': {
      const children = action.actions.map(describeAction).join('; ');
      const unless = action.unless.length > 0 ? ` unless ${action.unless.join(' or ')}` : '';
      if (action.trigger === 'window_closing') {
        return `window_closing timer due ${action.dueAt ?? formatDuration(action.delayMs)}${unless}: [${children}]`;
      }
      const after =
        action.clock === 'business' && action.businessMs !== undefined
          ? `${formatDuration(action.businessMs)} of business hours`
          : formatDuration(action.delayMs);
      return `after ${after}${unless}: [${children}]`;
    }
  }
}
