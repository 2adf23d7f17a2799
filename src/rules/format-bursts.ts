import { describeBurstSettings } from './burst.js';
import type { BurstRun } from './burst-plan.js';
import { formatLocal } from './business-time.js';
import { describeAction } from './format-plan.js';

/**
 * The bursts section of `convo-bridge explain`: per debounced rule, each burst the
 * given customer messages form, when it ends, what text the rule reads, and what it would do then.
 */
export function formatBurstRuns(runs: readonly BurstRun[], timezone: string, messages: number): string[] {
  if (runs.length === 0) return [];
  const lines = ['bursts (debounced rules: evaluated once per burst of customer messages):'];
  if (messages === 1) {
    lines.push(
      '  (this message alone: what happens if the customer writes nothing more; give --event several times for more)',
    );
  }
  let rule = '';
  for (const run of runs) {
    if (run.rule !== rule) {
      rule = run.rule;
      lines.push(`  ${run.rule}: ${describeBurstSettings(run.settings)}`);
    }
    const { burst } = run;
    const span = burst.firstAt === burst.lastAt ? burst.firstAt : `${burst.firstAt} .. ${burst.lastAt}`;
    lines.push(
      `    burst of ${burst.count} message(s) received ${span}; ends ${run.dueAt} (${formatLocal(new Date(run.dueAt), timezone)}, ${run.end})`,
    );
    lines.push(`      text: ${JSON.stringify(burst.texts.join('\n'))}`);
    for (const outcome of run.plan.outcomes) {
      lines.push(`      ${outcome.status === 'matched' ? 'MATCH' : 'no   '} ${outcome.reason}`);
      for (const note of outcome.notes) lines.push(`            note: ${note}`);
    }
    run.plan.actions.forEach((action, i) => {
      describeAction(action, `${i + 1}.`, '      ', lines);
    });
  }
  lines.push('');
  return lines;
}
