import { formatDuration } from '../base/duration.js';
import { listDiff } from '../base/list-diff.js';
import type { Plan, PlannedAction } from '../rules/plan.js';
import type { ActionMatcher, Expect } from './rules-test-schema.js';

/** One failed check of a case: what was checked, and the lines of a diff (`-` expected, `+` actual). */
export interface CheckFailure {
  check: string;
  diff: string[];
  /** The lines are problems, one each, not a diff (names that do not exist, check-names.ts). */
  list?: true;
}

/**
 * Compares a plan with a case's `expect` (pure; `tagsAfterEvent`: the conversation's tags after the
 * plan, sorted, for `expect.tags`). Each check that fails gives one failure with a
 * readable diff: matched lines are shown with two spaces, wanted-but-missing with `-`, got-but-not-
 * wanted with `+`.
 */
export function checkPlan(expect: Expect, plan: Plan, tagsAfterEvent?: readonly string[]): CheckFailure[] {
  const failures: CheckFailure[] = [];
  const matched = plan.matched.map((m) => m.rule);
  if (expect.matched !== undefined && !sameList(expect.matched, matched)) {
    failures.push({ check: 'matched (exact, in config order)', diff: listDiff(expect.matched, matched) });
  }
  if (expect.matched_include !== undefined) {
    const missing = expect.matched_include.filter((rule) => !matched.includes(rule));
    if (missing.length > 0) {
      failures.push({
        check: 'matched_include',
        diff: [...missing.map((rule) => `- ${rule}`), ...matched.map((rule) => `  ${rule}   (matched)`)],
      });
    }
  }
  if (expect.not_matched !== undefined) {
    const wrong = expect.not_matched.filter((rule) => matched.includes(rule));
    if (wrong.length > 0) {
      failures.push({
        check: 'not_matched',
        diff: wrong.map((rule) => `+ ${rule}   (matched, but should not)`),
      });
    }
  }
  if (expect.no_action === true && plan.actions.length > 0) {
    failures.push({
      check: 'no_action',
      diff: ['- (no action)', ...plan.actions.map((a, i) => `+ ${i + 1}. ${describeAction(a)}`)],
    });
  }
  if (expect.actions !== undefined) {
    const diff = exactActionsDiff(expect.actions, plan.actions);
    if (diff !== null) failures.push({ check: 'actions (exact, in order)', diff });
  }
  if (expect.actions_include !== undefined) {
    const diff = includedActionsDiff(expect.actions_include, plan.actions);
    if (diff !== null) failures.push({ check: 'actions_include (in order)', diff });
  }
  if (expect.tags !== undefined && tagsAfterEvent !== undefined) {
    const want = [...new Set(expect.tags)].sort();
    if (!sameList(want, tagsAfterEvent)) {
      failures.push({ check: 'tags after the event (any order)', diff: listDiff(want, tagsAfterEvent) });
    }
  }
  if (expect.blocked !== undefined) {
    const blocked = plan.blockedReplies.map((b) => b.actionId);
    if (!sameList(expect.blocked, blocked)) {
      failures.push({ check: 'blocked replies', diff: listDiff(expect.blocked, blocked) });
    }
  }
  return failures;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function exactActionsDiff(want: readonly ActionMatcher[], got: readonly PlannedAction[]): string[] | null {
  const ok = want.length === got.length && want.every((m, i) => matches(m, got[i] as PlannedAction));
  if (ok) return null;
  const lines: string[] = [];
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    const m = want[i];
    const a = got[i];
    if (m !== undefined && a !== undefined && matches(m, a)) {
      lines.push(`  ${i + 1}. ${describeAction(a)}`);
      continue;
    }
    if (m !== undefined) lines.push(`- ${i + 1}. ${describeMatcher(m)}`);
    if (a !== undefined) lines.push(`+ ${i + 1}. ${describeAction(a)}`);
  }
  if (want.length === 0 && got.length === 0) lines.push('  (no action)');
  return lines;
}

function includedActionsDiff(want: readonly ActionMatcher[], got: readonly PlannedAction[]): string[] | null {
  let from = 0;
  const missing: ActionMatcher[] = [];
  for (const m of want) {
    const at = got.findIndex((a, i) => i >= from && matches(m, a));
    if (at === -1) missing.push(m);
    else from = at + 1;
  }
  if (missing.length === 0) return null;
  return [
    ...missing.map((m) => `- ${describeMatcher(m)}   (not found in order)`),
    ...(got.length === 0 ? ['+ (no action)'] : got.map((a, i) => `+ ${i + 1}. ${describeAction(a)}`)),
  ];
}

function textOf(action: PlannedAction): string | null {
  if (action.type === 'note') return action.text;
  if (action.type === 'reply') {
    return 'text' in action.message ? action.message.text : (action.message.media.caption ?? '');
  }
  return null;
}

export function matches(matcher: ActionMatcher, action: PlannedAction): boolean {
  const m = typeof matcher === 'string' ? { type: matcher } : matcher;
  if (m.type !== undefined && m.type !== action.type) return false;
  if (m.rule !== undefined && m.rule !== action.rule) return false;
  if (m.id !== undefined && m.id !== action.id) return false;
  const text = textOf(action);
  if (m.text !== undefined && text !== m.text) return false;
  if (m.text_contains !== undefined && !(text ?? '').includes(m.text_contains)) return false;
  if (m.destination !== undefined && (action.type !== 'forward' || action.destination !== m.destination)) {
    return false;
  }
  if (m.tags !== undefined) {
    if (action.type !== 'tag' && action.type !== 'untag') return false;
    if (!sameList([...new Set(m.tags)].sort(), [...action.tags].sort())) return false;
  }
  return true;
}

function describeMatcher(matcher: ActionMatcher): string {
  if (typeof matcher === 'string') return matcher;
  const parts: string[] = [matcher.type ?? 'any action'];
  if (matcher.id !== undefined) parts.push(`[${matcher.id}]`);
  if (matcher.rule !== undefined) parts.push(`rule ${matcher.rule}`);
  if (matcher.destination !== undefined) parts.push(`to ${matcher.destination}`);
  if (matcher.tags !== undefined) parts.push(matcher.tags.join(', '));
  if (matcher.text !== undefined) parts.push(JSON.stringify(matcher.text));
  if (matcher.text_contains !== undefined) parts.push(`containing ${JSON.stringify(matcher.text_contains)}`);
  return parts.join(' ');
}

/** One line per planned action, as test results and backtest examples show it. */
export function describeAction(action: PlannedAction): string {
  const head = `${action.type} [${action.id}]`;
  switch (action.type) {
    case 'note':
      return `${head} ${JSON.stringify(action.text)}`;
    case 'need_human':
      return head;
    case 'forward':
      return `${head} to ${action.destination}`;
    case 'tag':
      return `${head} ${action.tags.join(', ')}${action.forMs !== null ? ` for ${formatDuration(action.forMs)}` : ''}`;
    case 'untag':
      return `${head} ${action.tags.join(', ')}`;
    case 'reply':
      return 'text' in action.message
        ? `${head} ${JSON.stringify(action.message.text)}`
        : `${head} ${action.message.media.type} ${action.message.media.name ?? action.message.media.url}`;
    case 'timer':
      return `${head} after ${formatDuration(action.delayMs)}${action.unless.length > 0 ? ` unless ${action.unless.join(', ')}` : ''}: ${action.actions.map((a) => a.type).join(', ')}`;
  }
}
