import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { formatDuration, parseDuration } from '../base/duration.js';
import { eventId } from '../queue/redis-keys.js';
import { findRecordedEvent, readRecordedEvents } from '../record/event-store.js';
import type { RecordedEvent } from '../record/recorded-event.js';
import { CliError } from './cli-error.js';
import { emptyHint } from './empty-hint.js';
import { formatTable } from './format-table.js';
import type { CliIo } from './io.js';
import { parseSince } from './parse-since.js';
import {
  addRedisTargetOptions,
  describeWhere,
  otherPrefixesWith,
  REDIS_TARGET_HELP,
  type RedisTarget,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000_000) {
    throw new CliError(`--limit must be a whole number from 1 to 1000000, not "${value}"`);
  }
  return limit;
}

/** One recorded event as JSON Lines hold it (what explain, test and backtest --from read). */
export function toJsonLines(events: readonly RecordedEvent[]): string {
  return events.map((e) => `${JSON.stringify(e)}\n`).join('');
}

function row(e: RecordedEvent): string[] {
  const actions = e.plan?.actions.map((a) => a.type).join(',') ?? '?';
  return [
    String(e.seq),
    e.now,
    e.event.kind,
    e.event.conversationId ?? '-',
    e.plan?.matched.join(',') || '-',
    actions || '-',
    e.redacted.join(',') || '-',
    JSON.stringify(e.event.text.replace(/\s+/g, ' ').slice(0, 40)),
  ];
}

/** `events list`: a table of the newest recorded events, or a hint where else to look when there are none. */
async function listEvents(
  where: RedisTarget,
  read: { limit: number; sinceMs?: number },
  options: { since?: string; json?: boolean },
  io: CliIo,
): Promise<void> {
  await runWithRedis(where, async (redis, layout) => {
    const keys = layout.global;
    const result = await readRecordedEvents(redis, keys, read);
    for (const problem of result.problems) io.stderr(`skipped an unreadable recorded event ${problem}\n`);
    if (options.json) {
      io.stdout(`${JSON.stringify(result.events, null, 2)}\n`);
      return;
    }
    if (result.events.length === 0) {
      const others = await otherPrefixesWith(redis, 'bridge:recorded:index', where.prefix);
      io.stdout(emptyHint('recorded events', where, others));
      io.stdout('(events are recorded while the config has record: { enabled: true })\n');
      return;
    }
    const total = await redis.zcard(keys.recordedIndex);
    io.stdout(
      `${total} recorded event(s) under prefix "${where.prefix}" at ${describeWhere(where)}${total > result.events.length ? `, ${result.events.length} shown` : ''}${options.since ? ` (last ${formatDuration(parseDuration(options.since) ?? 0)})` : ''}\n`,
    );
    io.stdout(
      formatTable(
        ['SEQ', 'EVALUATED AT', 'KIND', 'CONVERSATION', 'MATCHED', 'ACTIONS', 'REDACTED', 'TEXT'],
        result.events.map(row),
      ),
    );
  });
}

/** `convo-bridge events list|show|export`: the events a bridge recorded (`record.enabled`). */
export function registerEventsCommand(program: Command, io: CliIo): void {
  const events = addRedisTargetOptions(
    program
      .command('events')
      .description('recorded events (record.enabled): list, show, export as JSON Lines for backtest'),
  ).addHelpText(
    'after',
    `
${REDIS_TARGET_HELP}
Events are recorded only while the config has record: { enabled: true }.

Examples:
  convo-bridge events list --config config/bridge.yaml --since 1h
  convo-bridge events show 42 --config config/bridge.yaml          # by sequence number, event key or id
  convo-bridge events export --since 24h --out events.jsonl --config config/bridge.yaml
  convo-bridge backtest --config new-rules.yaml --from events.jsonl`,
  );
  const target = () => resolveRedisTarget(events.opts<RedisTargetFlags>());

  events
    .command('list')
    .description('list recorded events, oldest first')
    .option('--since <duration>', 'only those evaluated within this long (e.g. 24h)')
    .option('--limit <n>', 'the newest this many', '50')
    .option('--json', 'print a JSON array of recorded lines')
    .action(async (options: { since?: string; limit: string; json?: boolean }) => {
      const sinceMs = parseSince(options.since);
      const limit = parseLimit(options.limit);
      const read = { limit, ...(sinceMs !== undefined ? { sinceMs } : {}) };
      await listEvents(await target(), read, options, io);
    });

  events
    .command('show <ref>')
    .description('print one recorded event (JSON): by sequence number, event key or event id')
    .action(async (ref: string) => {
      const where = await target();
      await runWithRedis(where, async (redis, layout) => {
        const found = await findRecordedEvent(redis, layout.global, ref);
        if (!found) {
          throw new CliError(
            `no recorded event ${JSON.stringify(ref)} under prefix "${where.prefix}" (looked up as event id ${eventId(ref).slice(0, 12)}…, and as a sequence number): see convo-bridge events list`,
          );
        }
        io.stdout(`${JSON.stringify(found, null, 2)}\n`);
      });
    });

  events
    .command('export')
    .description('write recorded events as JSON Lines (what explain, test and backtest --from read)')
    .option('--since <duration>', 'only those evaluated within this long (e.g. 24h)')
    .option('-o, --out <file>', 'write to this file instead of stdout')
    .action(async (options: { since?: string; out?: string }) => {
      const sinceMs = parseSince(options.since);
      const where = await target();
      await runWithRedis(where, async (redis, layout) => {
        const result = await readRecordedEvents(redis, layout.global, {
          ...(sinceMs !== undefined ? { sinceMs } : {}),
        });
        for (const problem of result.problems) io.stderr(`skipped an unreadable recorded event ${problem}\n`);
        const text = toJsonLines(result.events);
        if (options.out === undefined) {
          io.stdout(text);
          return;
        }
        try {
          await writeFile(options.out, text);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
          throw new CliError(
            `cannot write ${options.out} (${code}): check the directory exists and is writable`,
            {
              cause: error,
            },
          );
        }
        io.stderr(`wrote ${result.events.length} recorded event(s) to ${options.out}\n`);
      });
    });
}
