import type { Reporter, TestModule } from 'vitest/node';
import type { PropertyRecord } from './check-property.js';
import { HOSTILE_SCALE } from './scale.js';

/**
 * Prints the hostile suite's table after the run: property, generated inputs, failures, time and
 * the slowest single input. `npm run test:hostile` adds it to the default reporter.
 */
export default class HostileTableReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows: PropertyRecord[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) rows.push(...(test.meta().hostile ?? []));
    }
    if (rows.length === 0) return;
    const total = rows.reduce(
      (sum, r) => ({ runs: sum.runs + r.runs, failures: sum.failures + r.failures, ms: sum.ms + r.ms }),
      { runs: 0, failures: 0, ms: 0 },
    );
    const table = [
      ['property', 'runs', 'failures', 'time', 'slowest input'],
      ...rows.map((r) => [
        r.property,
        count(r.runs),
        String(r.failures),
        seconds(r.ms),
        `${millis(r.slowestMs)}${r.clock === 'cpu' ? ' CPU' : ''}`,
      ]),
      ['total', count(total.runs), String(total.failures), seconds(total.ms), ''],
    ];
    const widths = table[0]?.map((_, c) => Math.max(...table.map((row) => (row[c] ?? '').length))) ?? [];
    const line = (row: string[]) =>
      `| ${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join(' | ')} |`;
    const rule = `|${widths.map((w, c) => (c === 0 ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
    const out = [
      '',
      `hostile input (HOSTILE_SCALE=${HOSTILE_SCALE}, ${process.platform} ${process.arch}, node ${process.version})`,
      line(table[0] ?? []),
      rule,
      ...table.slice(1).map(line),
      '',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

const count = (n: number) => n.toLocaleString('en-US');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const millis = (ms: number) => (ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`);
