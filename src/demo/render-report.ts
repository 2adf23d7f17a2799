import Table from 'cli-table3';
import type { ConversationReport, ObservedEffect } from './verify-outcome.js';

/** Totals of the run, each read from the side that can see it (emulator, bridge metrics, CRM sink, Redis). */
export interface DemoTotals {
  /** Webhook deliveries the platform made (emulator), redeliveries among them, and how many failed. */
  webhookDeliveries: number;
  redeliveries: number;
  webhookFailed: number;
  /** The receiver's answers (bridge /metrics): stored as new events, recognised as duplicates. */
  receiverQueued: number;
  receiverDuplicates: number;
  /** Platform API requests the emulator received, by endpoint. */
  platformCalls: number;
  callsByEndpoint: Record<string, number>;
  /** Requests an injected fault fired on, by what the fault did. */
  faults: { what: string; count: number }[];
  /** Calls the bridge's client saw fail and retried (bridge /metrics, result other than ok). */
  failedAttempts: number;
  /** Worker job retries (bridge /metrics). */
  jobRetries: number;
  deadLetters: number;
  crmRequests: number;
  crmAccepted: number;
  crmRetried: number;
  crmUnsigned: number;
}

export interface DemoLinks {
  inbox: string;
  metrics: string;
  queues: string;
  adminUser: string;
  adminPassword: string;
  logFile: string;
  /** `convo-bridge send-test-webhook ...` aimed at the running bridge (shown with --keep). */
  tryIt: string;
  /** True while everything keeps running (--keep). */
  live: boolean;
}

export interface DemoReportInput {
  morning: string;
  conversations: readonly ConversationReport[];
  totals: DemoTotals;
  problems: readonly string[];
  expectedActions: number;
  links: DemoLinks;
  warnings: readonly { message: string; count: number }[];
  seconds: number;
  /** Terminal width to fit the table into (none: the full width). */
  columns?: number;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function listEffects(effects: readonly ObservedEffect[], withStatus: boolean): string {
  if (effects.length === 0) return '-';
  return effects.map((e) => `${clip(e.text, 90)}${withStatus ? ` [${e.deliveryStatus}]` : ''}`).join('\n');
}

function conversationCell(report: ConversationReport): string {
  const wrote = report.wrote.map((text) => `“${clip(text, 70)}”`);
  const others = report.others.map((line) => `↳ ${line}`);
  return [`${report.label} · ${report.channelLabel}`, ...wrote, ...others].join('\n');
}

/** Column widths: the text columns shrink (down to their minimum) to fit a terminal of `columns`. */
const BASE_WIDTHS = [30, 26, 30, 30, 7, 5, 11, 9];
/** Shrinkable columns and the narrowest each may get (rule names are up to ~20 characters). */
const FLEXIBLE: readonly (readonly [index: number, min: number])[] = [
  [0, 20],
  [2, 18],
  [3, 18],
  [1, 22],
];
export function columnWidths(columns: number | undefined): number[] {
  const widths = [...BASE_WIDTHS];
  if (columns === undefined) return widths;
  let excess = widths.reduce((a, b) => a + b, 0) + widths.length + 1 - columns;
  while (excess > 0) {
    let shrunk = false;
    for (const [index, min] of FLEXIBLE) {
      const width = widths[index] ?? 0;
      if (excess > 0 && width > min) {
        widths[index] = width - 1;
        excess -= 1;
        shrunk = true;
      }
    }
    if (!shrunk) break;
  }
  return widths;
}

function crmCell(report: ConversationReport): string {
  const accepted = report.crm.reduce((sum, f) => sum + f.accepted, 0);
  return accepted === 0 ? '-' : String(accepted);
}

/** The per-conversation table (cli-table3), without colours so it reads the same in a log. */
export function renderConversationTable(
  conversations: readonly ConversationReport[],
  columns?: number,
): string {
  const table = new Table({
    head: [
      'conversation',
      'rules matched',
      'notes added',
      'replies sent [delivery]',
      'need human',
      'CRM',
      'timer',
      'blocked',
    ],
    colWidths: columnWidths(columns),
    wordWrap: true,
    style: { head: [], border: [] },
  });
  for (const report of conversations) {
    table.push([
      conversationCell(report),
      report.rules.length === 0 ? '-' : report.rules.join('\n'),
      listEffects(report.notes, false),
      listEffects(report.replies, true),
      report.needHuman ? 'yes' : '-',
      crmCell(report),
      report.timer ?? '-',
      report.blocked === 0 ? '-' : `${report.blocked} reply`,
    ]);
  }
  return table.toString();
}

function endpointList(calls: Record<string, number>): string {
  return Object.entries(calls)
    .sort((a, b) => b[1] - a[1])
    .map(([endpoint, count]) => `${count} ${endpoint}`)
    .join(', ');
}

export function renderReport(input: DemoReportInput): string {
  const t = input.totals;
  const lines: string[] = [];
  lines.push(
    '',
    `What the bridge did on the morning of ${input.morning} (read from the emulator and the CRM):`,
  );
  lines.push(renderConversationTable(input.conversations, input.columns));
  lines.push('', 'Totals');
  lines.push(
    `  webhooks      ${t.webhookDeliveries} deliveries by the platform (${t.redeliveries} redeliveries), ${t.webhookFailed} failed`,
    `  receiver      ${t.receiverQueued} events stored, ${t.receiverDuplicates} duplicates ignored`,
    `  platform      ${t.platformCalls} API calls: ${endpointList(t.callsByEndpoint)}`,
    ...(t.faults.length === 0
      ? ['  faults        none fired']
      : t.faults.map((f, i) => `  ${i === 0 ? 'faults      ' : '            '}  ${f.count} x ${f.what}`)),
    `  retries       ${t.failedAttempts} failed platform attempts retried; worker job retries: ${t.jobRetries}`,
    `  CRM           ${t.crmAccepted} forwards accepted (${t.crmRequests} requests, ${t.crmRetried} retried after a CRM 503, ${t.crmUnsigned} bad signatures)`,
    `  dead letters  ${t.deadLetters}`,
  );
  lines.push('');
  if (input.problems.length === 0) {
    lines.push(
      `Verified: all ${input.expectedActions} expected actions happened exactly once, nothing else happened (${input.seconds} s).`,
    );
  } else {
    lines.push(`NOT OK: ${input.problems.length} problem(s):`);
    for (const problem of input.problems) lines.push(`  - ${problem}`);
  }
  const l = input.links;
  lines.push(
    '',
    l.live ? 'Look around (running until Ctrl+C):' : 'Links (live only with --keep):',
    `  inbox         ${l.inbox}`,
    `  metrics       ${l.metrics}`,
    `  queues        ${l.queues}  (user ${l.adminUser}, password ${l.adminPassword})`,
    `  bridge log    ${l.logFile}${input.problems.length > 0 ? ' (kept: the demo failed)' : ' (removed when the demo ends)'}`,
  );
  if (l.live) lines.push('', 'Send a webhook yourself (or use the inbox page forms):', `  ${l.tryIt}`);
  if (input.warnings.length > 0) {
    lines.push('', 'Warnings in the bridge log (expected ones come from the injected faults):');
    for (const w of input.warnings) lines.push(`  ${w.count} x ${w.message}`);
  }
  return `${lines.join('\n')}\n`;
}
