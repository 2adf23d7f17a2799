import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { Redis } from 'ioredis';
import { bridgeKeys, QUEUE_NAMES } from '../queue/redis-keys.js';
import {
  countDeadLetters,
  type DeadLetter,
  DeadLetterNotFoundError,
  getDeadLetter,
  listDeadLetters,
  purgeDeadLetters,
  retryDeadLetter,
} from '../worker/dead-letters.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './run-cli.js';

interface RedisTarget {
  redisUrl: string;
  prefix: string;
}

/** Resolves where the dead letters live; replaced by the config-aware resolver when wired. */
export type RedisTargetResolver = (options: {
  config?: string;
  redisUrl?: string;
  prefix?: string;
}) => Promise<RedisTarget>;

export const defaultRedisTarget: RedisTargetResolver = async (options) => ({
  redisUrl: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: options.prefix ?? 'cb',
});

async function withRedis<T>(target: RedisTarget, run: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(target.redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: true,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    throw new CliError(
      `cannot reach Redis at ${new URL(target.redisUrl).host}: is it running? (set --redis-url or redis.url)`,
      {
        exitCode: EXIT.unavailable,
        cause: error,
      },
    );
  }
  try {
    return await run(redis);
  } catch (error) {
    if (error instanceof DeadLetterNotFoundError) throw new CliError(error.message, { cause: error });
    throw error;
  } finally {
    redis.disconnect();
  }
}

function summary(entry: DeadLetter): string {
  return [
    entry.id,
    entry.failedAt,
    entry.queue,
    entry.code,
    entry.conversationId ?? '-',
    entry.reason.slice(0, 80),
  ].join('  ');
}

export function registerDlqCommand(
  program: Command,
  io: CliIo,
  resolve: RedisTargetResolver = defaultRedisTarget,
): void {
  const dlq = program
    .command('dlq')
    .description('inspect and replay dead letters: events or timers that exhausted their attempts')
    .option('-c, --config <file>', 'bridge config (for redis.url and redis.prefix)')
    .option('--redis-url <url>', 'Redis URL (overrides the config)')
    .option('--prefix <prefix>', 'key prefix (overrides the config)')
    .addHelpText(
      'after',
      `
Examples:
  convo-bridge dlq list --config config/bridge.yaml
  convo-bridge dlq show ev-1a2b...-1763700000000
  convo-bridge dlq retry ev-1a2b...-1763700000000     # actions already done are not repeated
  convo-bridge dlq purge --all`,
    );
  const target = () => resolve(dlq.opts<{ config?: string; redisUrl?: string; prefix?: string }>());

  dlq
    .command('list')
    .description('list dead letters, newest first')
    .option('--limit <n>', 'how many', '50')
    .option('--json', 'print JSON lines')
    .action(async (options: { limit: string; json?: boolean }) => {
      const where = await target();
      await withRedis(where, async (redis) => {
        const keys = bridgeKeys(where.prefix);
        const entries = await listDeadLetters(redis, keys, { limit: Number(options.limit) || 50 });
        const total = await countDeadLetters(redis, keys);
        if (options.json) {
          for (const entry of entries) io.stdout(`${JSON.stringify(entry)}\n`);
          return;
        }
        io.stdout(`${total} dead letter(s)\n`);
        for (const entry of entries) io.stdout(`${summary(entry)}\n`);
      });
    });

  dlq
    .command('show <id>')
    .description('print one dead letter in full (JSON)')
    .action(async (id: string) => {
      const where = await target();
      await withRedis(where, async (redis) => {
        io.stdout(`${JSON.stringify(await getDeadLetter(redis, bridgeKeys(where.prefix), id), null, 2)}\n`);
      });
    });

  dlq
    .command('retry <id>')
    .description('put a dead letter back on its queue (completed actions are not repeated)')
    .action(async (id: string) => {
      const where = await target();
      await withRedis(where, async (redis) => {
        const queues = {
          events: new Queue(QUEUE_NAMES.events, { connection: redis, prefix: where.prefix }),
          timers: new Queue(QUEUE_NAMES.timers, { connection: redis, prefix: where.prefix }),
        };
        try {
          const { jobId } = await retryDeadLetter(redis, bridgeKeys(where.prefix), queues, id);
          io.stdout(`requeued ${id} as job ${jobId}\n`);
        } finally {
          await Promise.all([queues.events.close(), queues.timers.close()]);
        }
      });
    });

  dlq
    .command('purge [id]')
    .description('delete one dead letter, or all with --all')
    .option('--all', 'delete every dead letter')
    .action(async (id: string | undefined, options: { all?: boolean }) => {
      if (!id && !options.all) throw new CliError('say which dead letter to purge, or pass --all');
      const where = await target();
      await withRedis(where, async (redis) => {
        const removed = await purgeDeadLetters(redis, bridgeKeys(where.prefix), id);
        io.stdout(`purged ${removed} dead letter(s)\n`);
      });
    });
}
