import type { Figure, ScenarioResult } from './scenario.js';

/**
 * The suite's one table (scenario | scale | measured figures | expected | result), as plain text
 * for the terminal and as Markdown for docs/faults.md. Pure.
 */
export function formatFigures(figures: Record<string, Figure>): string {
  return Object.entries(figures)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(line);
        line = '';
      }
      line = line === '' ? word : `${line} ${word}`;
      while (line.length > width) {
        lines.push(line.slice(0, width));
        line = line.slice(width);
      }
    }
    lines.push(line);
  }
  return lines;
}

const COLUMNS = [
  { title: 'scenario', width: 20 },
  { title: 'scale', width: 18 },
  { title: 'measured figures', width: 58 },
  { title: 'expected', width: 34 },
  { title: 'result', width: 6 },
] as const;

function cells(result: ScenarioResult): string[] {
  return [
    `${result.id}. ${result.name}`,
    result.scale,
    formatFigures(result.figures),
    result.expected,
    result.passed ? 'PASS' : 'FAIL',
  ];
}

/** A boxed text table; long cells wrap within their column. */
export function formatTextTable(results: readonly ScenarioResult[]): string {
  const rule = `+${COLUMNS.map((c) => '-'.repeat(c.width + 2)).join('+')}+`;
  const row = (values: readonly string[]) => {
    const wrapped = values.map((value, i) => wrap(value, COLUMNS[i]?.width ?? 10));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    const out: string[] = [];
    for (let line = 0; line < height; line++) {
      out.push(
        `| ${wrapped.map((lines, i) => (lines[line] ?? '').padEnd(COLUMNS[i]?.width ?? 10)).join(' | ')} |`,
      );
    }
    return out.join('\n');
  };
  const lines = [rule, row(COLUMNS.map((c) => c.title)), rule];
  for (const result of results) lines.push(row(cells(result)), rule);
  return lines.join('\n');
}

/** The same table in Markdown (pipes in cells escaped). */
export function formatMarkdownTable(results: readonly ScenarioResult[]): string {
  const escapeCell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    `| ${COLUMNS.map((c) => c.title).join(' | ')} |`,
    `| ${COLUMNS.map(() => '---').join(' | ')} |`,
  ];
  for (const result of results) lines.push(`| ${cells(result).map(escapeCell).join(' | ')} |`);
  return lines.join('\n');
}
