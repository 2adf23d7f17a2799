import type { ShadowExample } from '../worker/shadow/shadow-store.js';
import { formatTable } from './format-table.js';

/**
 * `convo-bridge shadow report`: what the shadow rules found, per rule, built from the
 * hourly counts and the kept differences (worker/shadow/shadow-store.ts), as JSON or as text.
 */

export interface ShadowRuleReport {
  rule: string;
  /** Events it matched on either side. */
  events: number;
  /** Events it matched in the active plan, and in the candidate's. */
  active: number;
  candidate: number;
  /** Events on which its outcome differed. */
  differed: number;
  /** What the candidate would have done instead, among the kept differences of the period, most frequent first. */
  instead: { count: number; active: Side; candidate: Side }[];
  /** The newest kept differences of the period. */
  examples: ShadowExample[];
}

type Side = ShadowExample['active'];

export interface ShadowReport {
  since: string;
  until: string;
  /** Events the candidate rules were evaluated for, and on which any rule differed. */
  events: number;
  differed: number;
  rules: ShadowRuleReport[];
  /** Kept differences that could not be read (another version's?). */
  problems: string[];
}

export interface ShadowReportInput {
  sinceMs: number;
  untilMs: number;
  /** The hours' counts summed by field (`e`, `x`, `m|rule`, `a|rule`, `c|rule`, `d|rule`). */
  counts: ReadonlyMap<string, number>;
  /** Every kept difference, newest first. */
  examples: readonly ShadowExample[];
  problems: readonly string[];
  /** Examples shown per rule. */
  perRule: number;
}

export function buildShadowReport(input: ShadowReportInput): ShadowReport {
  const byRule = new Map<string, ShadowRuleReport>();
  const of = (rule: string): ShadowRuleReport => {
    let report = byRule.get(rule);
    if (report === undefined) {
      report = { rule, events: 0, active: 0, candidate: 0, differed: 0, instead: [], examples: [] };
      byRule.set(rule, report);
    }
    return report;
  };
  const fields = { m: 'events', a: 'active', c: 'candidate', d: 'differed' } as const;
  for (const [field, count] of input.counts) {
    const bar = field.indexOf('|');
    const kind = field.slice(0, bar) as keyof typeof fields;
    if (bar === -1 || !(kind in fields)) continue;
    of(field.slice(bar + 1))[fields[kind]] += count;
  }
  const inPeriod = input.examples.filter((e) => {
    const at = Date.parse(e.at);
    return at >= input.sinceMs && at <= input.untilMs;
  });
  for (const example of inPeriod) {
    const report = of(example.rule);
    if (report.examples.length < input.perRule) report.examples.push(example);
    const key = JSON.stringify([example.active, example.candidate]);
    const seen = report.instead.find((i) => JSON.stringify([i.active, i.candidate]) === key);
    if (seen) seen.count += 1;
    else report.instead.push({ count: 1, active: example.active, candidate: example.candidate });
  }
  const rules = [...byRule.values()];
  for (const report of rules) report.instead.sort((a, b) => b.count - a.count);
  rules.sort((a, b) => b.differed - a.differed || b.events - a.events || (a.rule < b.rule ? -1 : 1));
  return {
    since: new Date(input.sinceMs).toISOString(),
    until: new Date(input.untilMs).toISOString(),
    events: input.counts.get('e') ?? 0,
    differed: input.counts.get('x') ?? 0,
    rules,
    problems: [...input.problems],
  };
}

/** One side of a difference in words. */
function side(s: Side): string {
  if (!s.matched && s.actions.length === 0) return 'does not match';
  if (s.actions.length === 0) return 'matches, plans no action';
  return s.actions.join(', ');
}

/** The report for people; `header` says where it was read and for how long. */
export function formatShadowReport(report: ShadowReport, header: string): string {
  const lines = [header];
  const share = report.events > 0 ? ` (${((100 * report.differed) / report.events).toFixed(1)}%)` : '';
  lines.push(`events evaluated: ${report.events}; events whose plans differed: ${report.differed}${share}`);
  if (report.rules.length === 0) {
    lines.push('no rule matched on either side yet');
    return `${lines.join('\n')}\n`;
  }
  lines.push('');
  const table = formatTable(
    ['RULE', 'EVENTS', 'ACTIVE', 'CANDIDATE', 'DIFFERED'],
    report.rules.map((r) => [
      r.rule,
      String(r.events),
      String(r.active),
      String(r.candidate),
      String(r.differed),
    ]),
  );
  lines.push(table.trimEnd());
  for (const rule of report.rules) {
    if (rule.differed === 0 && rule.examples.length === 0) continue;
    const kept = rule.instead.reduce((sum, i) => sum + i.count, 0);
    lines.push('', `${rule.rule}: differed on ${rule.differed} event(s); instead, among the ${kept} kept:`);
    for (const change of rule.instead) {
      lines.push(`  ${`${change.count}x`.padEnd(5)} active:    ${side(change.active)}`);
      lines.push(`        candidate: ${side(change.candidate)}`);
    }
    lines.push('  newest:');
    for (const example of rule.examples) {
      lines.push(
        `    ${example.at}  conversation ${example.conversationId ?? '-'}  event ${example.eventKey} (${example.kind})`,
      );
    }
  }
  if (report.differed === 0) {
    lines.push(
      '',
      'no differences: the candidate rules planned what the active rules planned on every event',
    );
  }
  return `${lines.join('\n')}\n`;
}
