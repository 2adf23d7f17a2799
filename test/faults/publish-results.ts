/**
 * `npm run test:faults:publish`: puts the latest full run (test/faults/results/faults-full.json,
 * which `npm run test:faults` writes and git ignores) into docs/faults.md, between its
 * `<!-- results -->` and `<!-- worst -->` markers. Runs leave the tree clean; publishing a run in
 * the docs is a separate, deliberate step (issue 25).
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { formatMarkdownTable } from './support/results-table.js';
import type { ScenarioResult } from './support/scenario.js';

const RESULTS = 'test/faults/results/faults-full.json';
const DOC = 'docs/faults.md';

const SavedRunSchema = z.object({
  scale: z.literal('full', { error: 'publish a full run (npm run test:faults, not --reduced)' }),
  passed: z.boolean(),
  durationMs: z.number(),
  machine: z.object({ cpus: z.number(), loadAverageAtStart: z.array(z.number()), node: z.string() }),
  scenarios: z.array(z.custom<ScenarioResult>((value) => typeof value === 'object' && value !== null)),
});

/** Replaces what lies between `<!-- name -->` and `<!-- /name -->` in `text`. */
export function replaceBetween(text: string, name: string, body: string): string {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`${DOC} has no ${open} ... ${close} section to replace`);
  }
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

async function main(): Promise<number> {
  let raw: string;
  try {
    raw = await readFile(RESULTS, 'utf8');
  } catch {
    console.error(`${RESULTS} is missing: run the full suite first (npm run test:faults)`);
    return 2;
  }
  const parsed = SavedRunSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) {
    console.error(`${RESULTS}: ${z.prettifyError(parsed.error)}`);
    return 2;
  }
  const run = parsed.data;
  const failed = run.scenarios.filter((s) => !s.passed).length;
  const summary = `${Math.round(run.durationMs / 1000)} s in all, full scale, Node ${run.machine.node}, ${run.machine.cpus} cores, load average ${run.machine.loadAverageAtStart[0] ?? '?'} at the start; ${failed === 0 ? `all ${run.scenarios.length} rows passed` : `${failed} of ${run.scenarios.length} rows FAILED`}.`;
  const worst = run.scenarios.flatMap((s) =>
    Object.entries(s.worst).map(([what, value]) => `- ${s.id}. ${s.name}: ${what}: ${value}`),
  );
  let doc = await readFile(DOC, 'utf8');
  doc = replaceBetween(doc, 'results', `${summary}\n\n${formatMarkdownTable(run.scenarios)}`);
  doc = replaceBetween(doc, 'worst', worst.join('\n'));
  await writeFile(DOC, doc);
  // The table's column widths as the project's formatter writes them, so that `npm run lint` passes.
  const formatted = spawnSync('npx', ['biome', 'format', '--write', DOC], { encoding: 'utf8' });
  if (formatted.status !== 0) {
    console.error(`${DOC} written, but biome could not format it:\n${formatted.stderr}${formatted.stdout}`);
    return 1;
  }
  console.log(`${DOC}: the full run of ${RESULTS} published (${summary})`);
  return 0;
}

process.exitCode = await main();
