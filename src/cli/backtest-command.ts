import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { LoadedBusiness } from '../config/businesses.js';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { type BacktestReport, backtest } from '../record/backtest.js';
import { readRecordedEvents } from '../record/event-store.js';
import { compareGolden, GoldenPlanSchema } from '../record/golden-plans.js';
import { readJsonLines } from '../record/read-jsonl.js';
import { type RecordedEvent, RecordedEventSchema } from '../record/recorded-event.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { formatBacktest } from './format-backtest.js';
import type { CliIo } from './io.js';
import { parseSince } from './parse-since.js';
import { pickBusiness } from './pick-business.js';
import { resolveRedisTarget, runWithRedis } from './redis-target.js';

const EXAMPLES = `
Examples:
  $ convo-bridge backtest --config new-rules.yaml --since 24h          # recorded events in Redis
  $ convo-bridge backtest --config new-rules.yaml --from events.jsonl --json
  $ convo-bridge backtest --config new-rules.yaml --from events.jsonl --fail-on-change
  $ convo-bridge backtest --config rules.yaml --from events.jsonl --save plan.jsonl
  $ convo-bridge backtest --config rules.yaml --from events.jsonl --expect plan.jsonl   # in CI
  $ convo-bridge backtest --config agency.yaml --business toko-a --from toko-a.jsonl

Events come from --from (JSON Lines, as convo-bridge events export writes) or, with --since,
from the Redis of --config (redis.url, redis.prefix; --redis-url/--prefix override). "Before" is
what the bridge planned when it ran them (the recorded plans), or --baseline OLD.yaml's rules.
Conversations are replayed in arrival order with facts, once-marks, cooldowns, timers and the
reply window simulated; nothing is sent. Exit 1: --fail-on-change found a change, or --expect a
difference.`;

type Mismatches = ReturnType<typeof compareGolden>;

interface Options {
  config: string;
  since?: string;
  from?: string;
  baseline?: string;
  json?: boolean;
  failOnChange?: boolean;
  expect?: string;
  save?: string;
  redisUrl?: string;
  prefix?: string;
  business?: string;
}

async function load(path: string, io: CliIo, flag: string): Promise<LoadedConfig> {
  try {
    return await loadConfig(path, { allowMissingEnv: true });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const issue of error.issues) io.stderr(`${formatConfigIssue(issue)}\n`);
    throw new CliError(`${flag} ${path} is invalid: run convo-bridge validate ${path} for details`, {
      cause: error,
    });
  }
}

export function registerBacktestCommand(program: Command, io: CliIo): void {
  program
    .command('backtest')
    .description('what new rules would have done to recorded events, next to what was done')
    .requiredOption('-c, --config <file>', 'the config with the rules to try')
    .option('--since <duration>', 'recorded events of this long ago until now, from Redis (e.g. 24h)')
    .option('--from <file>', 'recorded events from a JSON Lines file (convo-bridge events export)')
    .option('--baseline <file>', 'compare with the rules of this config instead of the recorded plans')
    .option('--json', 'print the report as JSON')
    .option('--fail-on-change', 'exit 1 when any event would be planned differently')
    .option('--save <file>', "write the new rules' plan of every event (JSON Lines) for --expect")
    .option('--expect <file>', 'compare with plans saved by --save; exit 1 on a difference')
    .option('--redis-url <url>', "with --since: Redis URL; overrides the config's")
    .option('--prefix <prefix>', "with --since: key prefix; overrides the config's redis.prefix")
    .option('--business <id>', 'with businesses: whose rules to try (required when there are several)')
    .addHelpText('after', EXAMPLES)
    .action((options: Options) => runBacktest(options, io));
}

/** The events to replay: from --from's file, or recorded in the Redis of --config since --since. */
async function readEvents(options: Options, io: CliIo): Promise<RecordedEvent[]> {
  if (options.from !== undefined) {
    const read = await readJsonLines(options.from, RecordedEventSchema, 'a recorded event');
    if (!read.ok) {
      throw new CliError(
        `${read.problems.join('\n')}\n(--from takes JSON Lines as convo-bridge events export writes them)`,
      );
    }
    return read.values;
  }
  const sinceMs = parseSince(options.since);
  const target = await resolveRedisTarget({
    config: options.config,
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    business: options.business,
  });
  const read = await runWithRedis(target, (redis, layout) =>
    readRecordedEvents(redis, layout.global, sinceMs !== undefined ? { sinceMs } : {}),
  );
  for (const problem of read.problems) io.stderr(`skipped an unreadable recorded event ${problem}\n`);
  return read.events;
}

/** Says what the events cannot show (none at all, redacted texts); fails when there is nothing to compare. */
function checkEvents(
  lines: readonly RecordedEvent[],
  options: Options,
  io: CliIo,
  hasBaseline: boolean,
): void {
  if (lines.length === 0) {
    io.stderr(
      options.from !== undefined
        ? `${options.from} holds no events\n`
        : `no events recorded in the last ${options.since}: is record: { enabled: true } set in the running bridge's config, and is this its Redis and prefix?\n`,
    );
  }
  const redacted = lines.filter((line) => line.redacted.includes('texts')).length;
  if (redacted > 0) {
    io.stderr(
      `warning: ${redacted} event(s) were recorded with record.redact.texts: keyword and regex conditions cannot be judged on them\n`,
    );
  }
  // Masks leave the rest of a text as it was, but a condition on what they hid judges differently.
  const masked = lines.filter((line) => line.redacted.some((kind) => kind !== 'texts'));
  if (masked.length > 0) {
    const kinds = [...new Set(masked.flatMap((line) => line.redacted.filter((kind) => kind !== 'texts')))];
    io.stderr(
      `warning: ${masked.length} event(s) were recorded with ${kinds.map((kind) => `record.redact.${kind}`).join(', ')}: what those masked reads as "#" in their texts and names, so conditions on it (a regex for digits or an address) may judge differently\n`,
    );
  }
  const withoutPlan = lines.filter((line) => line.plan === undefined).length;
  if (withoutPlan > 0 && !hasBaseline) {
    throw new CliError(
      `${withoutPlan} event(s) carry no recorded plan, so there is nothing to compare with: pass --baseline OLD.yaml`,
    );
  }
}

/** `--save FILE`: the new rules' plan of every event, as JSON Lines, for a later --expect. */
async function savePlans(report: BacktestReport, file: string, io: CliIo): Promise<void> {
  await writeFile(file, report.plans.map((p) => `${JSON.stringify(p)}\n`).join('')).catch(
    (error: unknown) => {
      throw new CliError(`cannot write ${file}: ${(error as Error).message}`, { cause: error });
    },
  );
  io.stderr(`saved the plans of ${report.plans.length} event(s) to ${file}\n`);
}

/** `--expect FILE`: the events whose plan differs from the one saved by --save. */
async function compareWithSaved(file: string, report: BacktestReport): Promise<Mismatches> {
  const golden = await readJsonLines(file, GoldenPlanSchema, 'a saved plan (backtest --save)');
  if (!golden.ok) throw new CliError(golden.problems.join('\n'));
  return compareGolden(golden.values, report.plans);
}

/** The report for people (tables and the --expect differences), or as JSON with --json. */
function printReport(
  report: BacktestReport,
  mismatches: Mismatches,
  options: Options,
  io: CliIo,
  /** The business backtested, when its config lists businesses. */
  named: string | undefined,
): void {
  if (options.json) {
    const { plans: _plans, ...rest } = report;
    io.stdout(
      `${JSON.stringify({ ...rest, ...(options.expect ? { expectMismatches: mismatches } : {}) }, null, 2)}\n`,
    );
    return;
  }
  io.stdout(
    formatBacktest(report, {
      config: named === undefined ? options.config : `${options.config} (business ${named})`,
      baseline: options.baseline ? `the rules of ${options.baseline}` : 'the recorded plans',
    }),
  );
  if (options.expect === undefined) return;
  io.stdout(`\n--expect ${options.expect}: `);
  if (mismatches.length === 0) {
    io.stdout(`all ${report.plans.length} plan(s) as expected\n`);
    return;
  }
  io.stdout(`${mismatches.length} event(s) differ (- expected, + actual)\n`);
  for (const m of mismatches.slice(0, 20)) {
    io.stdout(`  #${m.seq} ${m.conversationId} ${JSON.stringify(m.text.slice(0, 60))} (${m.eventKey})\n`);
    for (const line of m.diff) io.stdout(`    ${line}\n`);
  }
  if (mismatches.length > 20) io.stdout(`  ... and ${mismatches.length - 20} more (--json lists all)\n`);
}

/**
 * The business of --baseline to compare with: the one of the same id when the baseline has
 * businesses, else its only one (a config from before businesses, say).
 */
function baselineBusiness(
  baseline: LoadedConfig,
  business: LoadedBusiness,
  given: string | undefined,
): LoadedBusiness {
  if (baseline.written === 'top-level') return baseline.businesses[0] ?? pickBusiness(baseline, undefined);
  // A business of a listed config compares with the baseline's business of the same id.
  const id = baseline.businesses.some((b) => b.id === business.id) ? business.id : given;
  return pickBusiness(baseline, id, '--business (for --baseline)');
}

/** `convo-bridge backtest`: read the events, replay them under the new rules, report, set the exit code. */
async function runBacktest(options: Options, io: CliIo): Promise<void> {
  if ((options.since === undefined) === (options.from === undefined)) {
    throw new CliError(
      'say which events: --since 24h (recorded in Redis) or --from events.jsonl, one of them',
    );
  }
  const loaded = await load(options.config, io, '--config');
  const business = pickBusiness(loaded, options.business);
  const baseline = options.baseline
    ? baselineBusiness(await load(options.baseline, io, '--baseline'), business, options.business)
    : undefined;
  // A file of businesses names the one backtested; a file of one business (no businesses:) need not.
  const named = loaded.written === 'businesses' ? business.id : undefined;
  const lines = await readEvents(options, io);
  checkEvents(lines, options, io, baseline !== undefined);
  const report = backtest(lines, business.rules, baseline ? { baseline: baseline.rules } : {});
  if (options.save !== undefined) await savePlans(report, options.save, io);
  const mismatches = options.expect === undefined ? [] : await compareWithSaved(options.expect, report);
  printReport(report, mismatches, options, io, named);
  if (mismatches.length > 0) {
    throw new CliError(`${mismatches.length} event(s) differ from ${options.expect}`, {
      exitCode: EXIT.invalidInput,
    });
  }
  if (options.failOnChange && (report.changedEvents > 0 || report.escalations.length > 0)) {
    throw new CliError(`--fail-on-change: ${report.changedEvents} event(s) would be planned differently`, {
      exitCode: EXIT.invalidInput,
    });
  }
}
