import type { BacktestReport, Example } from '../record/backtest.js';
import { formatTable } from './format-table.js';

function ex(examples: readonly Example[]): string {
  return examples
    .map((e) => `#${e.seq} ${e.conversationId} ${JSON.stringify(e.text.slice(0, 40))}`)
    .join('; ');
}

/** Longest table of conversations printed; --json has them all. */
const MAX_ROWS = 10;

const signed = (n: number) => (n > 0 ? `+${n}` : n < 0 ? `${n}` : '0');

/** The backtest report for people: a few tables, only the sections that have something. */
export function formatBacktest(report: BacktestReport, what: { config: string; baseline: string }): string {
  const out: string[] = [];
  out.push(
    `backtest of ${what.config} over ${report.events} recorded event(s) in ${report.conversations} conversation(s)${report.from ? `, ${report.from} .. ${report.to}` : ''}`,
  );
  out.push(`compared with: ${what.baseline}; nothing was called`);
  out.push(`events whose plan changes: ${report.changedEvents}`);
  out.push('');
  out.push(
    formatTable(
      ['RULE', 'MATCHED BEFORE', 'AFTER', 'CHANGE'],
      report.rules.map((r) => [r.rule, String(r.before), String(r.after), signed(r.after - r.before)]),
    ).trimEnd(),
  );
  for (const [title, list] of [
    ['ACTIONS ADDED', report.added],
    ['ACTIONS REMOVED', report.removed],
  ] as const) {
    if (list.length === 0) continue;
    out.push('');
    out.push(
      formatTable(
        [title, 'EVENTS', 'EXAMPLES'],
        list.map((c) => [`${c.rule} ${c.type}`, String(c.count), ex(c.examples)]),
      ).trimEnd(),
    );
  }
  if (report.escalations.length > 0) {
    out.push('');
    out.push(
      formatTable(
        ['ESCALATION', 'CONVERSATION', 'BEFORE', 'AFTER'],
        report.escalations
          .slice(0, MAX_ROWS)
          .map((e) => [e.change, e.conversationId, e.before ?? '-', e.after ?? '-']),
      ).trimEnd(),
    );
    const counts = new Map<string, number>();
    for (const e of report.escalations) counts.set(e.change, (counts.get(e.change) ?? 0) + 1);
    const summary = [...counts].map(([change, n]) => `${n} ${change}`).join(', ');
    out.push(
      report.escalations.length > MAX_ROWS
        ? `... ${report.escalations.length - MAX_ROWS} more (--json lists all); in all: ${summary}`
        : `in all: ${summary}`,
    );
  }
  if (report.blocked.length > 0) {
    out.push('');
    out.push(
      formatTable(
        ['REPLIES THE WINDOW BLOCKS', 'BEFORE', 'AFTER', 'EXAMPLES'],
        report.blocked.map((b) => [b.rule, String(b.before), String(b.after), ex(b.examples)]),
      ).trimEnd(),
    );
  }
  if (report.changedEvents === 0 && report.escalations.length === 0) {
    out.push('');
    out.push('no change: the new rules plan the same actions for every recorded event');
  }
  return `${out.join('\n')}\n`;
}
