import type { ActionConfig } from '../rules/rule-schema.js';
import type { ConfigPath } from './config-document.js';
import type { BridgeConfig } from './config-schema.js';
import type { SchemaProblem } from './describe-zod-issues.js';
import { tagWarnings } from './tag-warnings.js';

/**
 * What a valid config sets up that can never happen (issue 30): sets left empty that silence a
 * rule without a word, and conditions on tags that no rule sets (issue 28, tag-warnings.ts). `validate` prints them as warnings, with file:line:column; the bridge
 * starts anyway (an empty set may be on purpose while a config is being written).
 */
export function configWarnings(config: BridgeConfig): SchemaProblem[] {
  const warnings: SchemaProblem[] = [];
  const noWindow = config.replyWindow.appliesTo.length === 0;
  const neverOpen = config.businessHours !== null && Object.keys(config.businessHours.weekly).length === 0;
  config.rules.forEach((rule, i) => {
    if (noWindow && rule.on.includes('window_closing')) {
      warnings.push({
        path: ['rules', i, 'on'],
        atKey: false,
        message: `rules.${i} (${rule.name}): on: window_closing never fires: reply_window.applies_to is [], so no channel has a reply window; list the channel kinds it applies to, or remove the rule`,
      });
    }
    if (neverOpen) {
      for (const path of businessClockTimers(rule.actions, ['rules', i, 'then'])) {
        warnings.push({
          path,
          atKey: false,
          message: `${path.join('.')}: clock: business never comes due: business_hours.weekly is {} (never open); add opening hours, or use clock: wall`,
        });
      }
    }
  });
  warnings.push(...tagWarnings(config));
  return warnings;
}

/** The `clock:` paths of timers counting business hours among `actions` (and timers within them). */
function businessClockTimers(actions: readonly ActionConfig[], path: ConfigPath): ConfigPath[] {
  return actions.flatMap((action, j) => {
    if (action.type !== 'after') return [];
    const own: ConfigPath[] = action.clock === 'business' ? [[...path, j, 'clock']] : [];
    return [...own, ...businessClockTimers(action.actions, [...path, j, 'then'])];
  });
}
