import { closestNameHint } from '../base/closest-name.js';
import type { CheckFailure } from './check-plan.js';
import type { ActionMatcher, Expect } from './rules-test-schema.js';

/** The names a case's expectations may refer to: those of the rules under test. */
export interface KnownNames {
  rules: readonly string[];
  destinations: readonly string[];
}

/**
 * Names in `expect` that the rules under test do not have (pure). A check against a name that does
 * not exist passes or fails for the wrong reason: `not_matched: [escalate-complaint]` passes while
 * `escalate-complaints` matches. Each unknown name is one line, with the closest name.
 */
export function checkNames(expect: Expect, known: KnownNames): CheckFailure[] {
  const lines: string[] = [];
  const rule = (field: string, name: string) => {
    if (!known.rules.includes(name)) {
      lines.push(`${field}: no rule "${name}"${closestNameHint(name, known.rules)}`);
    }
  };
  for (const field of ['matched', 'matched_include', 'not_matched'] as const) {
    for (const name of expect[field] ?? []) rule(field, name);
  }
  for (const id of expect.blocked ?? []) rule('blocked', ruleOfActionId(id));
  for (const field of ['actions', 'actions_include'] as const) {
    (expect[field] ?? []).forEach((matcher, i) => {
      checkMatcher(matcher, `${field}[${i}]`, known, rule, lines);
    });
  }
  return lines.length === 0
    ? []
    : [{ check: 'names that the rules under test do not have', diff: lines, list: true }];
}

function checkMatcher(
  matcher: ActionMatcher,
  where: string,
  known: KnownNames,
  rule: (field: string, name: string) => void,
  lines: string[],
): void {
  if (typeof matcher === 'string') return;
  if (matcher.rule !== undefined) rule(`${where}.rule`, matcher.rule);
  if (matcher.id !== undefined) rule(`${where}.id`, ruleOfActionId(matcher.id));
  const destination = matcher.destination;
  if (destination !== undefined && !known.destinations.includes(destination)) {
    const hint =
      known.destinations.length === 0
        ? ': the config has no destinations'
        : closestNameHint(destination, known.destinations);
    lines.push(`${where}.destination: no destination "${destination}"${hint}`);
  }
}

/** `escalate-complaints#0`, `r#1.0` and `r#0~closed.1` are actions of the rule before the `#`. */
function ruleOfActionId(id: string): string {
  const hash = id.indexOf('#');
  return hash === -1 ? id : id.slice(0, hash);
}
