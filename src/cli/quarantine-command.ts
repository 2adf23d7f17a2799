import { type Command, Option } from 'commander';
import { pino } from 'pino';
import { DEFAULT_PREFIX } from '../queue/redis-keys.js';
import {
  createEventProducer,
  DEFAULT_EVENT_JOB_OPTIONS,
  type EventProducer,
} from '../receive/event-producer.js';
import {
  getQuarantined,
  listQuarantine,
  purgeQuarantine,
  type QuarantineEntry,
  type QuarantineStore,
} from '../receive/quarantine-store.js';
import { ReceiverError } from '../receive/receiver-errors.js';
import { RECEIVER_DEFAULTS } from '../receive/receiver-options.js';
import { replayQuarantined } from '../receive/replay-quarantined.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './run-cli.js';

interface ConnectionFlags {
  redisUrl?: string;
  prefix: string;
}

const EXAMPLES = `
Examples:
  $ convo-bridge quarantine list --redis-url redis://127.0.0.1:6379
  $ convo-bridge quarantine list --json --limit 20 --redis-url redis://127.0.0.1:6379 --prefix cb
  $ convo-bridge quarantine show q-3f2a9c0d1e4b5a6978877665 --redis-url redis://127.0.0.1:6379
  $ convo-bridge quarantine replay q-3f2a9c0d1e4b5a6978877665 --redis-url redis://127.0.0.1:6379
  $ convo-bridge quarantine purge --redis-url redis://127.0.0.1:6379

The quarantine holds authenticated webhook bodies the receiver could not understand, and events
with a name this version does not know (reason unknown_event). "replay" normalises a body again
and queues it exactly once, as if it had just arrived; the entry is removed once it is queued.
`;

/** Options every subcommand takes (REDIS_URL is the fallback for --redis-url). */
function withConnection(command: Command): Command {
  return command
    .addOption(new Option('--redis-url <url>', 'Redis URL (default: $REDIS_URL)'))
    .addOption(new Option('--prefix <prefix>', 'key prefix the receiver uses').default(DEFAULT_PREFIX));
}

async function withProducer<T>(
  flags: ConnectionFlags,
  run: (producer: EventProducer) => Promise<T>,
): Promise<T> {
  const redisUrl = flags.redisUrl ?? process.env.REDIS_URL;
  if (!redisUrl) {
    throw new CliError('no Redis given: pass --redis-url redis://HOST:PORT or set REDIS_URL');
  }
  if (!/^rediss?:\/\//.test(redisUrl)) {
    throw new CliError('--redis-url must start with redis:// or rediss:// (e.g. redis://127.0.0.1:6379)');
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(flags.prefix)) {
    throw new CliError(
      '--prefix must be 1-64 letters, digits, "_", "." or "-" (the receiver default is "cb")',
    );
  }
  const producer = createEventProducer({
    redisUrl,
    prefix: flags.prefix,
    dedupeWindowSeconds: RECEIVER_DEFAULTS.dedupeWindowSeconds,
    jobOptions: DEFAULT_EVENT_JOB_OPTIONS,
    commandTimeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
  });
  try {
    await producer.connected(5_000, { firstError: true }).catch((error: unknown) => {
      throw new CliError(
        'cannot reach Redis at the given --redis-url; check that it is running and the URL is right',
        {
          exitCode: EXIT.unavailable,
          code: 'REDIS_UNAVAILABLE',
          cause: error,
        },
      );
    });
    return await run(producer);
  } catch (error) {
    if (
      error instanceof ReceiverError &&
      (error.code === 'QUARANTINE_NOT_FOUND' || error.code === 'QUARANTINE_NOT_REPLAYABLE')
    ) {
      throw new CliError(error.message, { code: error.code, cause: error });
    }
    throw error;
  } finally {
    await producer.close();
  }
}

const storeOf = (producer: EventProducer): QuarantineStore => ({
  redis: producer.redis,
  keys: producer.keys,
});

function formatLine(entry: QuarantineEntry): string {
  const name = entry.eventName ?? '-';
  const conversation = entry.conversationId ?? '-';
  return `${entry.id}  ${entry.receivedAt}  ${entry.reason}  ${name}  ${conversation}  ${entry.bodyBytes}B\n    ${entry.message}\n`;
}

/** `convo-bridge quarantine list|show ID|replay ID|purge`. */
export function registerQuarantineCommand(program: Command, io: CliIo): void {
  const quarantine = program
    .command('quarantine')
    .description('list, show, replay or purge webhook bodies the receiver kept in its quarantine')
    .addHelpText('after', EXAMPLES);

  withConnection(quarantine.command('list'))
    .description('list entries, newest first')
    .addOption(new Option('--limit <n>', 'show at most this many').default('100'))
    .option('--json', 'print a JSON array (bodies included)')
    .action(async (flags: ConnectionFlags & { limit: string; json?: boolean }) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new CliError('--limit must be a whole number from 1 to 10000');
      }
      await withProducer(flags, async (producer) => {
        const entries = await listQuarantine(storeOf(producer), { limit });
        if (flags.json) {
          io.stdout(`${JSON.stringify(entries, null, 2)}\n`);
          return;
        }
        if (entries.length === 0) {
          io.stdout(`the quarantine under prefix "${flags.prefix}" is empty\n`);
          return;
        }
        io.stdout('id  received  reason  event  conversation  size\n');
        for (const entry of entries) io.stdout(formatLine(entry));
      });
    });

  withConnection(quarantine.command('show').argument('<id>', 'entry id, as `list` prints it'))
    .description('print one entry as JSON, with its body')
    .action(async (id: string, flags: ConnectionFlags) => {
      await withProducer(flags, async (producer) => {
        const entry = await getQuarantined(storeOf(producer), id);
        io.stdout(`${JSON.stringify(entry, null, 2)}\n`);
      });
    });

  withConnection(quarantine.command('replay').argument('<id>', 'entry id, as `list` prints it'))
    .description('normalise the body again and queue it exactly once; removes the entry once queued')
    .action(async (id: string, flags: ConnectionFlags) => {
      await withProducer(flags, async (producer) => {
        const result = await replayQuarantined({ store: storeOf(producer), ingest: producer.ingest }, id);
        if (result.outcome === 'ignored') {
          io.stdout(`${id} was a test ping: nothing to queue; entry removed\n`);
          return;
        }
        io.stdout(
          `${id} replayed: ${result.outcome} as job ${result.ingest.jobId} (event key ${result.event.key}); entry removed\n`,
        );
      });
    });

  withConnection(quarantine.command('purge'))
    .description('remove every entry')
    .action(async (flags: ConnectionFlags) => {
      await withProducer(flags, async (producer) => {
        const removed = await purgeQuarantine(storeOf(producer));
        io.stdout(`removed ${removed} quarantine ${removed === 1 ? 'entry' : 'entries'}\n`);
      });
    });
}
