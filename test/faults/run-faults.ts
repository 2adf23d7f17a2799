/**
 * `npm run test:faults [-- --reduced]`: the fault-injection suite. Each scenario runs against real
 * processes (a private redis-server with the append-only file on, the emulator, convo-bridge
 * `serve`/`work`/`start` from the build), one scenario after another. At the end it prints one
 * table and saves it as JSON in test/faults/results/faults-<full|reduced>.json (ignored by git: a run
 * leaves the tree clean; docs/faults.md publishes a full run on purpose). Exit code 0 only
 * when every scenario passed. See docs/faults.md.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { describeError } from '../../src/base/errors.js';
import { clockWindow } from './scenarios/clock-window.js';
import { killedWorkers } from './scenarios/killed-workers.js';
import { linkRewriting } from './scenarios/link-rewriting.js';
import { platformFaults } from './scenarios/platform-faults.js';
import { redeliveries } from './scenarios/redeliveries.js';
import { clusterFailover, sentinelFailover } from './scenarios/redis-failover.js';
import { redisRestart } from './scenarios/redis-restart.js';
import { formatTextTable } from './support/results-table.js';
import { parseSuiteArgs } from './support/scale.js';
import type { Scenario, ScenarioResult } from './support/scenario.js';

const SCENARIOS: readonly Scenario[] = [
  redeliveries,
  killedWorkers,
  redisRestart,
  platformFaults,
  clockWindow,
  linkRewriting,
  sentinelFailover,
  clusterFailover,
];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The scenarios start `node dist/cli.js`: build first when dist is missing or older than src. */
function ensureBuild(log: (line: string) => void): void {
  let built = 0;
  try {
    built = statSync(join('dist', 'cli.js')).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime('src')) return;
  log('dist/ is missing or older than src/: running npm run build');
  const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed: fix the type errors above first');
}

async function runScenario(
  scenario: Scenario,
  scale: 'full' | 'reduced',
  log: (line: string) => void,
): Promise<ScenarioResult> {
  const started = Date.now();
  const budget = scenario.budgetMs(scale);
  const abort = new AbortController();
  // Out of budget: abort (the world kills its processes, so the scenario's waits fail fast) and
  // report the overrun rather than whatever the aborted waits say.
  const timer = setTimeout(
    () => abort.abort(new Error(`did not finish within its budget of ${Math.round(budget / 1000)} s`)),
    budget,
  );
  try {
    const outcome = await scenario.run(scale, { log, signal: abort.signal });
    return { id: scenario.id, name: scenario.name, ...outcome, durationMs: Date.now() - started };
  } catch (error) {
    const reason = abort.signal.aborted ? abort.signal.reason : error;
    return {
      id: scenario.id,
      name: scenario.name,
      scale,
      figures: {},
      expected: '',
      passed: false,
      problems: [`could not run: ${describeError(reason)}`],
      worst: {},
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const args = parseSuiteArgs(process.argv.slice(2), process.env);
  const t0 = Date.now();
  const log = (line: string) => console.log(`[faults ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`);
  ensureBuild(log);
  const loadAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const chosen = SCENARIOS.filter((s) => args.only.length === 0 || args.only.includes(s.id));
  log(`scale ${args.scale}: ${chosen.map((s) => `${s.id}. ${s.name}`).join(', ')}`);
  const results: ScenarioResult[] = [];
  for (const scenario of chosen) {
    log(`--- ${scenario.id}. ${scenario.name} (${args.scale})`);
    const result = await runScenario(scenario, args.scale, (line) => log(`  ${line}`));
    results.push(result);
    log(
      `${result.passed ? 'PASS' : 'FAIL'} ${scenario.id}. ${scenario.name} in ${Math.round(result.durationMs / 1000)} s`,
    );
    for (const problem of result.problems) log(`  problem: ${problem}`);
    // The worst cases show how close a passing row came to its limits (attempts, delays).
    for (const [what, value] of Object.entries(result.worst)) log(`  worst: ${what} ${value}`);
  }
  const passed = results.every((r) => r.passed);
  console.log(`\n${formatTextTable(results)}\n`);
  const file = join('test', 'faults', 'results', `faults-${args.scale}.json`);
  if (args.only.length === 0) {
    await mkdir(join('test', 'faults', 'results'), { recursive: true });
    await writeFile(
      file,
      `${JSON.stringify(
        {
          scale: args.scale,
          passed,
          startedAt: new Date(t0).toISOString(),
          durationMs: Date.now() - t0,
          machine: { cpus: cpus().length, loadAverageAtStart: loadAtStart, node: process.version },
          scenarios: results,
        },
        null,
        2,
      )}\n`,
    );
    log(`saved ${file}`);
  } else {
    log(`--only: results not saved (${file} keeps the last complete run)`);
  }
  log(`${passed ? 'all scenarios passed' : 'FAILED'} in ${Math.round((Date.now() - t0) / 1000)} s`);
  // The plain closing line CI reads: scenarios passed and failed.
  const failedCount = results.filter((r) => !r.passed).length;
  process.stdout.write(`faults: ${results.length - failedCount} passed, ${failedCount} failed\n`);
  return passed ? 0 : 1;
}

// Exit explicitly: a scenario that failed half-way may leave a socket or timer behind, and the
// suite's answer must not wait for it (its processes are already gone).
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`test:faults: ${describeError(error)}`);
    process.exit(2);
  },
);
