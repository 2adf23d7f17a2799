/**
 * `npm run bench`: every benchmark, one after another in one session on this machine, then ONE
 * table with each figure beside its goal and its baseline, saved as bench/results/bench.json.
 * Each part runs in its own process (the same scripts `npm run bench:<part>` runs alone) so one
 * part's heap and JIT state never flatter or burden another.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CostResult, costRows } from './cost.js';
import { exitUnlessHarness, LOAD_HARNESS } from './peers-support.js';

const here = dirname(fileURLToPath(import.meta.url));

const PARTS = ['ingest', 'e2e', 'rules', 'rate-budget', 'cost'] as const;

function runPart(part: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stderr.write(`\n=== bench ${part} ===\n`);
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, `${part}.ts`)], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`bench ${part} exited with ${code}`)),
    );
  });
}

async function result<T>(name: string): Promise<T> {
  return JSON.parse(await readFile(join(here, 'results', `${name}.json`), 'utf8')) as T;
}

interface Row {
  area: string;
  measure: string;
  value: string;
  goal: string;
  met: string;
}

const yes = (ok: boolean) => (ok ? 'yes' : 'NO');

async function main() {
  const loadAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const only = process.argv.slice(2);
  // The cost part drives the bridge with the harness's load generator: say now, not after the others.
  if (only.length === 0 || only.includes('cost'))
    exitUnlessHarness('npm run bench (its cost part)', LOAD_HARNESS);
  for (const part of PARTS) if (only.length === 0 || only.includes(part)) await runPart(part);

  const ingest = await result<{
    rows: {
      phase: string;
      baselineRps: number;
      receiverRps: number;
      ratio: number;
      receiverP50Ms: number;
      receiverP99Ms: number;
      baselineP99Ms: number;
    }[];
  }>('ingest');
  const e2e = await result<{
    layout: string;
    results: {
      phase: string;
      eventsPerSecond: number;
      callsPerSecond: number;
      p50Ms: number;
      p99Ms: number;
      peakRssMb: number;
    }[];
  }>('e2e');
  const rules = await result<{
    results: { rules: number; meanUs: number; p99Us: number; eventsPerSecond: number }[];
    ratio10kVs10: { mean: number };
  }>('rules');
  const rate = await result<{
    budgetUsedPct: number;
    rateLimitedPct: number;
    accepted: number;
    allowed: number;
    seconds: number;
  }>('rate-budget');
  const cost = await result<CostResult>('cost');

  const sat = ingest.rows.find((r) => r.phase === 'saturation');
  const fixed = ingest.rows.find((r) => r.phase.startsWith('fixed'));
  const e2eSat = e2e.results.find((r) => r.phase === 'saturation');
  const e2eFixed = e2e.results.find((r) => r.phase.startsWith('fixed'));
  const peakRss = Math.max(...e2e.results.map((r) => r.peakRssMb));
  const rules10 = rules.results.find((r) => r.rules === 10);
  const rules10k = rules.results.find((r) => r.rules === 10_000);
  const rows: Row[] = [
    {
      area: 'ingest',
      measure: 'receiver req/s vs bare Express JSON echo (saturation)',
      value: `${sat?.receiverRps} vs ${sat?.baselineRps} = ${sat?.ratio}`,
      goal: 'ratio >= 0.85',
      met: yes((sat?.ratio ?? 0) >= 0.85),
    },
    {
      area: 'ingest',
      measure: 'ack latency p50 / p99 at 1,000 req/s (baseline p99)',
      value: `${fixed?.receiverP50Ms} / ${fixed?.receiverP99Ms} ms (${fixed?.baselineP99Ms} ms)`,
      goal: 'p99 < 10 ms',
      met: yes((fixed?.receiverP99Ms ?? Number.POSITIVE_INFINITY) < 10),
    },
    {
      area: 'end to end',
      measure: 'events/s (platform calls/s) at saturation',
      value: `${e2eSat?.eventsPerSecond} (${e2eSat?.callsPerSecond})`,
      goal: '>= 2,400 (3,100)',
      met: yes((e2eSat?.eventsPerSecond ?? 0) >= 2400),
    },
    {
      area: 'end to end',
      measure: `latency p50 / p99 at ${e2eFixed?.phase ?? 'fixed rate'}`,
      value: `${e2eFixed?.p50Ms} / ${e2eFixed?.p99Ms} ms`,
      goal: 'p99 < 50 ms',
      met: yes((e2eFixed?.p99Ms ?? Number.POSITIVE_INFINITY) < 50),
    },
    {
      area: 'end to end',
      measure: `peak RSS of the bridge (${e2e.layout})`,
      value: `${peakRss} MB`,
      goal: '< 120 MB',
      met: yes(peakRss < 120),
    },
    {
      area: 'rules',
      measure: 'evaluation per event, mean: 10 vs 10,000 keyword rules',
      value: `${rules10?.meanUs} vs ${rules10k?.meanUs} us = ${rules.ratio10kVs10.mean}x`,
      goal: '<= 2x',
      met: yes(rules.ratio10kVs10.mean <= 2),
    },
    {
      area: 'rules',
      measure: 'pure evaluation events/s on one core (10,000 rules)',
      value: `${rules10k?.eventsPerSecond}`,
      goal: '-',
      met: '-',
    },
    {
      area: 'rate budget',
      measure: `earlier form 100/min over ${rate.seconds} s: budget used, 429s`,
      value: `${rate.budgetUsedPct}% (${rate.accepted}/${rate.allowed}), ${rate.rateLimitedPct}% 429`,
      goal: '>= 95%, <= 2%',
      met: yes(rate.budgetUsedPct >= 95 && rate.rateLimitedPct <= 2),
    },
    ...costRows(cost).map((row) => ({ area: 'cost per event', ...row })),
  ];
  const header: Row = { area: 'area', measure: 'measure', value: 'measured', goal: 'goal', met: 'met' };
  const all = [header, ...rows];
  const keys = Object.keys(header) as (keyof Row)[];
  const widths = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  console.log(
    `\nconvo-bridge benchmarks, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, load at start ${loadAtStart.join(' ')}`,
  );
  for (const row of all) console.log(keys.map((k, i) => row[k].padEnd(widths[i] ?? 0)).join('  '));
  await mkdir(join(here, 'results'), { recursive: true });
  await writeFile(
    join(here, 'results', 'bench.json'),
    `${JSON.stringify({ date: new Date().toISOString(), cores: cpus().length, node: process.version, loadAtStart, rows }, null, 2)}\n`,
  );
}

await main();
