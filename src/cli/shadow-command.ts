import type { Command } from 'commander';
import { formatDuration } from '../base/duration.js';
import { readShadowCounts, readShadowExamples, resetShadow } from '../worker/shadow/shadow-store.js';
import { CliError } from './cli-error.js';
import { buildShadowReport, formatShadowReport } from './format-shadow-report.js';
import type { CliIo } from './io.js';
import { parseSince } from './parse-since.js';
import {
  addRedisTargetOptions,
  describeWhere,
  REDIS_TARGET_HELP,
  type RedisTarget,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

/** Without --since: the config's shadow.max_age, else a week (what the counts keep by default). */
const DEFAULT_WINDOW_MS = 7 * 86_400_000;

function parseExamples(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 0 || count > 1000) {
    throw new CliError(`--examples must be a whole number from 0 to 1000, not "${value}"`);
  }
  return count;
}

/** `shadow report`: per rule, events, differences, what would have been done instead, examples. */
async function printReport(
  where: RedisTarget,
  options: { since?: string; examples: string; json?: boolean },
  io: CliIo,
): Promise<void> {
  const untilMs = Date.now();
  const windowMs = where.config?.shadow?.maxAgeMs ?? DEFAULT_WINDOW_MS;
  const sinceMs = parseSince(options.since, untilMs) ?? untilMs - windowMs;
  const perRule = parseExamples(options.examples);
  await runWithRedis(where, async (redis, layout) => {
    const keys = layout.global;
    const counts = await readShadowCounts(redis, keys, sinceMs, untilMs);
    const kept = await readShadowExamples(redis, keys);
    const report = buildShadowReport({ sinceMs, untilMs, counts, ...kept, perRule });
    for (const problem of report.problems) io.stderr(`skipped an unreadable shadow difference ${problem}\n`);
    if (options.json) {
      io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    const business = where.naming.tag === '' ? '' : ` of business "${where.business}"`;
    const header = `shadow rules${business} under prefix "${where.prefix}" at ${describeWhere(where)}, last ${formatDuration(untilMs - sinceMs)} (since ${report.since})`;
    if (report.events === 0 && report.differed === 0 && report.rules.length === 0) {
      io.stdout(`${header}\nno shadow rules results in this period\n`);
      io.stdout(
        '(shadow rules run while the config has shadow: { rules: FILE }; counts of events whose plans agree are written every few seconds)\n',
      );
      return;
    }
    io.stdout(formatShadowReport(report, header));
  });
}

/** `convo-bridge shadow report|reset`: what the candidate rules (`shadow:`) would have done. */
export function registerShadowCommand(program: Command, io: CliIo): void {
  const shadow = addRedisTargetOptions(
    program
      .command('shadow')
      .description(
        'shadow rules (shadow: in the config): where the candidate rules differ from the active ones',
      ),
  ).addHelpText(
    'after',
    `
${REDIS_TARGET_HELP}
Shadow rules run while the config has shadow: { rules: FILE } (docs/rules.md, "Shadow rules").

Examples:
  convo-bridge shadow report --config config/bridge.yaml --since 24h
  convo-bridge shadow report --config config/bridge.yaml --business toko-a --json
  convo-bridge shadow reset --config config/bridge.yaml            # start counting afresh`,
  );
  const target = () => resolveRedisTarget(shadow.opts<RedisTargetFlags>());

  shadow
    .command('report')
    .description('per rule: events matched, on which the candidate differed, what it would have done instead')
    .option('--since <duration>', 'the period to report (e.g. 24h; default: shadow.max_age, else 7d)')
    .option('--examples <n>', 'newest differences shown per rule', '3')
    .option('--json', 'print the report as JSON')
    .action(async (options: { since?: string; examples: string; json?: boolean }) => {
      await printReport(await target(), options, io);
    });

  shadow
    .command('reset')
    .description('delete the shadow rules counts and differences (e.g. after changing the candidate)')
    .action(async () => {
      const where = await target();
      await runWithRedis(where, async (redis, layout) => {
        const deleted = await resetShadow(redis, layout.global);
        io.stdout(`deleted ${deleted} key(s) of shadow rules results under prefix "${where.prefix}"\n`);
      });
    });
}
