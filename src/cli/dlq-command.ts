import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import {
  countDeadLetters,
  type DeadLetter,
  DeadLetterBusyError,
  DeadLetterNotFoundError,
  getDeadLetter,
  listDeadLetters,
  purgeDeadLetters,
  retryDeadLetter,
} from '../worker/failures/dead-letters.js';
import { CliError } from './cli-error.js';
import { emptyHint } from './empty-hint.js';
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

function row(entry: DeadLetter): string[] {
  return [
    entry.id,
    entry.failedAt,
    entry.queue,
    entry.code,
    entry.conversationId ?? '-',
    entry.reason.replace(/\s+/g, ' ').slice(0, 80),
  ];
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new CliError(`--limit must be a whole number from 1 to 10000, not "${value}"`);
  }
  return limit;
}

/** `dlq list`: a table of the newest dead letters, or a hint where else to look when there are none. */
async function printDeadLetters(where: RedisTarget, limit: number, json: boolean, io: CliIo): Promise<void> {
  await runWithRedis(where, async (redis, layout) => {
    const keys = layout.global;
    const entries = await listDeadLetters(redis, keys, { limit });
    if (json) {
      io.stdout(`${JSON.stringify(entries, null, 2)}\n`);
      return;
    }
    if (entries.length === 0) {
      const others = await otherPrefixesWith(redis, 'bridge:dead:index', where.prefix);
      io.stdout(emptyHint('dead letters', where, others));
      return;
    }
    const total = await countDeadLetters(redis, keys);
    io.stdout(
      `${total} dead letter(s) under prefix "${where.prefix}" at ${describeWhere(where)}${total > entries.length ? `, newest ${entries.length} shown` : ''}\n`,
    );
    io.stdout(formatTable(['ID', 'FAILED AT', 'QUEUE', 'CODE', 'CONVERSATION', 'REASON'], entries.map(row)));
  });
}

/** `convo-bridge dlq list|show ID|retry ID|purge ID|--all`. */
export function registerDlqCommand(program: Command, io: CliIo): void {
  const dlq = addRedisTargetOptions(
    program
      .command('dlq')
      .description('inspect and replay dead letters: events or timers that exhausted their attempts'),
  ).addHelpText(
    'after',
    `
${REDIS_TARGET_HELP}

Examples:
  convo-bridge dlq list --config config/bridge.yaml
  convo-bridge dlq list --redis-url redis://10.0.0.5:6379 --prefix cb --json
  convo-bridge dlq show b-mwul2ak1-4d9a2c4adf4a-1a2b3c4d-1763700000000 --config config/bridge.yaml
  convo-bridge dlq retry b-mwul2ak1-4d9a2c4adf4a-1a2b3c4d-1763700000000 --config config/bridge.yaml   # actions already done are not repeated
  convo-bridge dlq purge --all --config config/bridge.yaml`,
  );
  const target = () => resolveRedisTarget(dlq.opts<RedisTargetFlags>());
  const withRedis = async <T>(work: Parameters<typeof runWithRedis<T>>[1]): Promise<T> => {
    try {
      return await runWithRedis(await target(), work);
    } catch (error) {
      if (error instanceof DeadLetterNotFoundError || error instanceof DeadLetterBusyError)
        throw new CliError(error.message, { cause: error });
      throw error;
    }
  };

  dlq
    .command('list')
    .description('list dead letters, newest first')
    .option('--limit <n>', 'show at most this many (1-10000)', '50')
    .option('--json', 'print a JSON array (full entries)')
    .action(async (options: { limit: string; json?: boolean }) => {
      const limit = parseLimit(options.limit);
      await printDeadLetters(await target(), limit, options.json === true, io);
    });

  dlq
    .command('show <id>')
    .description('print one dead letter in full (JSON)')
    .action(async (id: string) => {
      await withRedis(async (redis, layout) => {
        io.stdout(`${JSON.stringify(await getDeadLetter(redis, layout.global, id), null, 2)}\n`);
      });
    });

  dlq
    .command('retry <id>')
    .description('put a dead letter back on its queue (completed actions are not repeated)')
    .action(async (id: string) => {
      await withRedis(async (redis, layout) => {
        const opened: Queue[] = [];
        // The dead letter goes back to the queue of its conversation's shard (where its run state is).
        const queuesOf = (conversationId: string) => {
          const shard = layout.shardOf(conversationId);
          // skipMetasUpdate: the bridge's queues own the meta hash (its event stream length).
          const options = { connection: redis, prefix: shard.queuePrefix, skipMetasUpdate: true };
          const queues = {
            events: new Queue(QUEUE_NAMES.events, options),
            timers: new Queue(QUEUE_NAMES.timers, options),
          };
          opened.push(queues.events, queues.timers);
          return queues;
        };
        try {
          const { jobId } = await retryDeadLetter(redis, layout.global, queuesOf, id);
          io.stdout(`requeued ${id} as job ${jobId}\n`);
        } finally {
          await Promise.all(opened.map((queue) => queue.close()));
        }
      });
    });

  dlq
    .command('purge [id]')
    .description('delete one dead letter, or all with --all')
    .option('--all', 'delete every dead letter')
    .action(async (id: string | undefined, options: { all?: boolean }) => {
      if (!id && !options.all)
        throw new CliError('say which dead letter to purge (an id from `dlq list`), or pass --all');
      if (id && options.all) throw new CliError('give an id or --all, not both');
      const where = await target();
      await withRedis(async (redis, layout) => {
        const removed = await purgeDeadLetters(redis, layout.global, id);
        io.stdout(`purged ${removed} dead letter(s) under prefix "${where.prefix}"\n`);
      });
    });
}
