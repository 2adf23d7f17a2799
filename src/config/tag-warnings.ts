import { closestNameHint } from '../base/closest-name.js';
import type { ActionConfig, ConditionConfig } from '../rules/rule-schema.js';
import { TAG_MODES } from '../rules/tags.js';
import type { ConfigPath } from './config-document.js';
import type { BridgeConfig } from './config-schema.js';
import type { SchemaProblem } from './describe-zod-issues.js';

/**
 * A `tags:` condition on a tag that no `tag:` action of the config sets: most often a
 * typo, and the condition then never holds (`any`, `all`) or always holds (`none`) without a word.
 * A warning, not an error: the tag may come from an earlier config still held by conversations.
 */
export function tagWarnings(config: BridgeConfig): SchemaProblem[] {
  const set = new Set<string>();
  for (const rule of config.rules) collectSetTags(rule.actions, set);
  collectSetTags(config.replyWindow.whenClosed, set);
  const known = [...set].sort();
  const warnings: SchemaProblem[] = [];
  config.rules.forEach((rule, i) => {
    if (!rule.if) return;
    for (const use of conditionTags(rule.if, ['rules', i, 'if'])) {
      if (set.has(use.name)) continue;
      const hint =
        known.length === 0
          ? ': no rule has a tag: action'
          : closestNameHint(use.name, known).replace('; the names are ', '; the tags set are ');
      warnings.push({
        path: use.path,
        atKey: false,
        message: `${use.path.join('.')} (${rule.name}): no rule sets the tag "${use.name}" (tag: ${use.name}), so tags: ${use.mode} ${use.mode === 'none' ? 'always holds' : 'never holds'} for it${hint}`,
      });
    }
  });
  return warnings;
}

function collectSetTags(actions: readonly ActionConfig[], into: Set<string>): void {
  for (const action of actions) {
    if (action.type === 'tag') for (const name of action.tags) into.add(name);
    else if (action.type === 'after') collectSetTags(action.actions, into);
  }
}

/** Every tag a condition names, with its path and mode (all/any/not included). */
function conditionTags(
  cond: ConditionConfig,
  path: ConfigPath,
): { name: string; mode: string; path: ConfigPath }[] {
  const found: { name: string; mode: string; path: ConfigPath }[] = [];
  if (cond.tags) {
    for (const mode of TAG_MODES) {
      (cond.tags[mode] ?? []).forEach((name, k) => {
        found.push({ name, mode, path: [...path, 'tags', mode, k] });
      });
    }
  }
  for (const key of ['all', 'any'] as const) {
    (cond[key] ?? []).forEach((item, k) => {
      found.push(...conditionTags(item, [...path, key, k]));
    });
  }
  if (cond.not) found.push(...conditionTags(cond.not, [...path, 'not']));
  return found;
}
