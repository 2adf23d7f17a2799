import type { Queue } from 'bullmq';
import type { Command } from 'commander';
import { readOnlyQueue } from '../queue/read-only-queue.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import { type ConversationClocks, listConversationClocks } from '../worker/timers/list-timers.js';
import { emptyHint } from './empty-hint.js';
import { formatTable } from './format-table.js';
import type { CliIo } from './io.js';
import {
  addRedisTargetOptions,
  describeWhere,
  otherPrefixesWith,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

function rows(clocks: readonly ConversationClocks[]): string[][] {
  return clocks.flatMap((c) => {
    const window = !c.window.applies
      ? c.window.channelKind === null
        ? '-'
        : `none (${c.window.channelKind})`
      : (c.window.closesLocal ?? c.window.closesAt ?? 'unknown (no customer message known)');
    return c.timers.map((t, i) => [
      i === 0 ? c.conversationId : '',
      i === 0 ? window : '',
      t.dueLocal ?? t.dueAt,
      t.rule,
      t.trigger === 'window_closing' || t.trigger === 'burst'
        ? t.trigger
        : `after${t.clock === 'business' ? ' (business)' : ''}`,
      t.state,
    ]);
  });
}

/** `convo-bridge timers list`: the conversation clocks. */
export function registerTimersCommand(program: Command, io: CliIo): void {
  const timers = addRedisTargetOptions(
    program
      .command('timers')
      .description('see the conversation clocks: pending timers, open bursts and reply windows'),
  ).addHelpText(
    'after',
    `
Redis: --config (or config/bridge.yaml, then $CONVO_BRIDGE_CONFIG) gives redis.url and redis.prefix,
as for start; --redis-url and --prefix override them. With a config, times are shown in its time
zone and the reply window's end is computed from its channels and reply_window.

Examples:
  convo-bridge timers list --config config/bridge.yaml
  convo-bridge timers list --conversation conv_8f3a2b1c --config config/bridge.yaml --json`,
  );
  timers
    .command('list')
    .description('per conversation: when the reply window closes and the timers waiting to fire')
    .option('--conversation <id>', 'only this conversation')
    .option('--json', 'print a JSON array')
    .action(async (options: { conversation?: string; json?: boolean }) => {
      const where = await resolveRedisTarget(timers.opts<RedisTargetFlags>());
      await runWithRedis(where, async (redis, layout) => {
        const shards =
          options.conversation === undefined ? layout.all : [layout.shardOf(options.conversation)];
        const queues = shards.map((shard) => readOnlyQueue(QUEUE_NAMES.timers, redis, shard.queuePrefix));
        try {
          const clocks = [];
          for (const [i, shard] of shards.entries()) {
            clocks.push(
              ...(await listConversationClocks(redis, shard.keys, queues[i] as Queue, {
                ...(where.config ? { config: where.config } : {}),
                ...(options.conversation !== undefined ? { conversationId: options.conversation } : {}),
              })),
            );
          }
          if (options.json) {
            io.stdout(`${JSON.stringify(clocks, null, 2)}\n`);
            return;
          }
          if (clocks.length === 0) {
            const others = await otherPrefixesWith(redis, 'timers:delayed', where.prefix);
            io.stdout(emptyHint('pending timers', where, others));
            return;
          }
          const count = clocks.reduce((n, c) => n + c.timers.length, 0);
          io.stdout(
            `${count} pending timer(s) in ${clocks.length} conversation(s) under prefix "${where.prefix}" at ${describeWhere(where)}\n`,
          );
          io.stdout(
            formatTable(['CONVERSATION', 'WINDOW CLOSES', 'DUE', 'RULE', 'TRIGGER', 'STATE'], rows(clocks)),
          );
        } finally {
          await Promise.all(queues.map((queue) => queue.close()));
        }
      });
    });
}
