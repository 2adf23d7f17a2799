import type { Command } from 'commander';
import { pino } from 'pino';
import { bridgeJobOptions } from '../queue/job-options.js';
import { createEventProducer, DEFAULT_EVENT_JOB_OPTIONS } from '../receive/event-producer.js';
import {
  countQuarantine,
  getQuarantined,
  listQuarantine,
  purgeQuarantine,
  type QuarantineEntry,
  type QuarantineStore,
  removeQuarantined,
} from '../receive/quarantine-store.js';
import { RECEIVER_DEFAULTS } from '../receive/receiver-defaults.js';
import { ReceiverError } from '../receive/receiver-errors.js';
import { replayQuarantined } from '../receive/replay-quarantined.js';
import { CliError } from './cli-error.js';
import { emptyHint } from './empty-hint.js';
import { EXIT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import type { CliIo } from './io.js';
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

const EXAMPLES = `
${REDIS_TARGET_HELP}

Examples:
  $ convo-bridge quarantine list --config config/bridge.yaml
  $ convo-bridge quarantine list --json --limit 20 --redis-url redis://127.0.0.1:6379 --prefix cb
  $ convo-bridge quarantine show q-3f2a9c0d1e4b5a6978877665 --config config/bridge.yaml
  $ convo-bridge quarantine replay q-3f2a9c0d1e4b5a6978877665 --config config/bridge.yaml
  $ convo-bridge quarantine purge --all --config config/bridge.yaml

The quarantine holds authenticated webhook bodies the receiver could not understand, and events
with a name this version does not know (reason unknown_event). "replay" normalises a body again
and queues it exactly once, as if it had just arrived; the entry is removed once it is queued.
`;

function rethrowNotFound(error: unknown): never {
  if (
    error instanceof ReceiverError &&
    (error.code === 'QUARANTINE_NOT_FOUND' || error.code === 'QUARANTINE_NOT_REPLAYABLE')
  ) {
    throw new CliError(error.message, { code: error.code, cause: error });
  }
  throw error;
}

async function withStore<T>(target: RedisTarget, work: (store: QuarantineStore) => Promise<T>): Promise<T> {
  return runWithRedis(target, (redis, layout) => work({ redis, keys: layout.global })).catch(rethrowNotFound);
}

function row(entry: QuarantineEntry): string[] {
  return [
    entry.id,
    entry.receivedAt,
    entry.reason,
    entry.eventName ?? '-',
    entry.conversationId ?? '-',
    `${entry.bodyBytes}B`,
    entry.message.replace(/\s+/g, ' ').slice(0, 80),
  ];
}

/** `quarantine list`: a table of the newest entries, or a hint where else to look when there are none. */
async function listEntries(where: RedisTarget, limit: number, json: boolean, io: CliIo): Promise<void> {
  await withStore(where, async (store) => {
    const entries = await listQuarantine(store, { limit });
    if (json) {
      io.stdout(`${JSON.stringify(entries, null, 2)}\n`);
      return;
    }
    if (entries.length === 0) {
      const others = await otherPrefixesWith(store.redis, 'bridge:quarantine', where.prefix);
      io.stdout(emptyHint('quarantined bodies', where, others));
      return;
    }
    const total = await countQuarantine(store);
    io.stdout(
      `${total} quarantined ${total === 1 ? 'body' : 'bodies'} under prefix "${where.prefix}" at ${describeWhere(where)}${total > entries.length ? `, newest ${entries.length} shown` : ''}\n`,
    );
    io.stdout(
      formatTable(['ID', 'RECEIVED AT', 'REASON', 'EVENT', 'CONVERSATION', 'SIZE', 'WHY'], entries.map(row)),
    );
  });
}

/** `convo-bridge quarantine list|show ID|replay ID|purge ID|--all`. */
export function registerQuarantineCommand(program: Command, io: CliIo): void {
  const quarantine = addRedisTargetOptions(
    program
      .command('quarantine')
      .description('list, show, replay or purge webhook bodies the receiver kept in its quarantine'),
  ).addHelpText('after', EXAMPLES);
  const target = () => resolveRedisTarget(quarantine.opts<RedisTargetFlags>());

  quarantine
    .command('list')
    .description('list entries, newest first')
    .option('--limit <n>', 'show at most this many (1-10000)', '50')
    .option('--json', 'print a JSON array (bodies included)')
    .action(async (flags: { limit: string; json?: boolean }) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new CliError(`--limit must be a whole number from 1 to 10000, not "${flags.limit}"`);
      }
      await listEntries(await target(), limit, flags.json === true, io);
    });

  quarantine
    .command('show')
    .argument('<id>', 'entry id, as `list` prints it')
    .description('print one entry as JSON, with its body')
    .action(async (id: string) => {
      await withStore(await target(), async (store) => {
        io.stdout(`${JSON.stringify(await getQuarantined(store, id), null, 2)}\n`);
      });
    });

  quarantine
    .command('replay')
    .argument('<id>', 'entry id, as `list` prints it')
    .description('normalise the body again and queue it exactly once; removes the entry once queued')
    .action(async (id: string) => {
      const where = await target();
      // Reachability first (fast, names the address); then the receiver's own exactly-once ingest.
      const layout = await runWithRedis(where, async (_redis, found) => found);
      // With a config, as the bridge's receiver stores events (its dedupe window, job options and
      // retention); no event stream length: the bridge's queues own that setting.
      const producer = createEventProducer({
        topology: where.topology,
        prefix: where.prefix,
        layout,
        ...(where.config
          ? {
              dedupeWindowSeconds: Math.ceil(where.config.retention.dedupeMs / 1000),
              jobOptions: bridgeJobOptions(where.config.worker.attempts, where.config.retention),
            }
          : {
              dedupeWindowSeconds: RECEIVER_DEFAULTS.dedupeWindowSeconds,
              jobOptions: DEFAULT_EVENT_JOB_OPTIONS,
            }),
        commandTimeoutMs: 5_000,
        logger: pino({ level: 'silent' }),
      });
      try {
        await producer.connected(5_000, { firstError: true }).catch((error: unknown) => {
          throw new CliError(`cannot reach Redis at ${where.address} (from ${where.source})`, {
            exitCode: EXIT.unavailable,
            code: 'REDIS_UNAVAILABLE',
            cause: error,
          });
        });
        const result = await replayQuarantined(
          { store: { redis: producer.redis, keys: producer.keys }, ingest: producer.ingest },
          id,
        ).catch(rethrowNotFound);
        if (result.outcome === 'ignored') {
          io.stdout(`${id} was a test ping: nothing to queue; entry removed\n`);
          return;
        }
        io.stdout(
          `${id} replayed: ${result.outcome} as job ${result.ingest.jobId} (event key ${result.event.key}); entry removed\n`,
        );
      } finally {
        await producer.close();
      }
    });

  quarantine
    .command('purge [id]')
    .description('delete one entry, or all with --all')
    .option('--all', 'delete every entry')
    .action(async (id: string | undefined, options: { all?: boolean }) => {
      if (!id && !options.all)
        throw new CliError('say which entry to purge (an id from `quarantine list`), or pass --all');
      if (id && options.all) throw new CliError('give an id or --all, not both');
      await withStore(await target(), async (store) => {
        if (id) {
          if (!(await removeQuarantined(store, id))) {
            throw new CliError(`no quarantine entry ${id}: list them with \`convo-bridge quarantine list\``);
          }
          io.stdout(`removed quarantine entry ${id}\n`);
          return;
        }
        const removed = await purgeQuarantine(store);
        io.stdout(`removed ${removed} quarantine ${removed === 1 ? 'entry' : 'entries'}\n`);
      });
    });
}
