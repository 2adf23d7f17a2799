import type { Command } from 'commander';
import { createKeyLayout } from '../queue/key-layout.js';
import { describeStored, layoutRecordKey, readStoredLayout } from '../queue/layout-record.js';
import { ReshardError, reshard, reshardObstacles } from '../queue/reshard.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import {
  addRedisTargetOptions,
  describeWhere,
  type RedisTargetFlags,
  resolveRedisTarget,
  runWithRedis,
} from './redis-target.js';

/** `convo-bridge reshard`: change redis.shards by draining first, as most conversations move shard. */
export function registerReshardCommand(program: Command, io: CliIo): void {
  const command = addRedisTargetOptions(
    program
      .command('reshard')
      .description("move a stopped, drained bridge's data to another number of queue shards")
      .requiredOption('--to <shards>', 'the new redis.shards (must be what the config says)')
      .option('--check', 'only say whether the queues are drained and what would move'),
  ).addHelpText(
    'after',
    `
Changing redis.shards moves most conversations to another shard, so it is done drained:
  1. keep the bridge running with the OLD config until it has no work left
     (convo-bridge reshard --to N --check says what is still in the way);
  2. stop every receiver and worker;
  3. set redis.shards: N in the config, run  convo-bridge reshard --to N --config FILE;
  4. start the bridge with the new config.
Every conversation's state, dedupe markers, pending timers and kept run state move to their
new shard; an interrupted reshard is resumed by running it again. A bridge whose config does
not match the layout recorded in Redis refuses to start and says to run this.`,
  );
  command.action(async (options: { to: string; check?: boolean }) => {
    // Digits only: Number() also takes "1e2" and " 3 ".
    const to = /^\d{1,3}$/.test(options.to) ? Number(options.to) : Number.NaN;
    if (!Number.isInteger(to) || to < 1 || to > 128) {
      throw new CliError(`--to must be a whole number from 1 to 128, got ${JSON.stringify(options.to)}`);
    }
    const target = await resolveRedisTarget(command.opts<RedisTargetFlags>(), process.env, undefined, 'any');
    if (target.config && target.config.redis.shards !== to) {
      throw new CliError(
        `the config says redis.shards: ${target.config.redis.shards}, not ${to}: set redis.shards: ${to} first, so that the bridge starts with the layout this makes`,
      );
    }
    const layout = createKeyLayout({
      prefix: target.prefix,
      shards: to,
      tagged: to > 1 || target.topology.kind === 'cluster',
    });
    await runWithRedis(target, async (redis) => {
      const stored = await readStoredLayout(redis, target.prefix);
      if (options.check) {
        // No record and no data of the old single-Redis layout: nothing to move; what is in the
        // way is whatever already waits under the layout wanted.
        const from = stored
          ? createKeyLayout({ prefix: target.prefix, shards: stored.shards, tagged: stored.tagged })
          : layout;
        const obstacles = await reshardObstacles(redis, from);
        io.stdout(
          `prefix "${target.prefix}" at ${describeWhere(target)}: ${stored ? describeStored(stored) : 'no data yet'}; wanted ${layout.describe()}\n`,
        );
        if (obstacles.length > 0) {
          throw new CliError(`not ready to reshard: ${obstacles.join('; ')}`, {
            code: 'RESHARD_NOT_DRAINED',
            exitCode: EXIT.unavailable,
          });
        }
        io.stdout('drained: ready to reshard\n');
        return;
      }
      try {
        const report = await reshard({
          redis,
          prefix: target.prefix,
          to: layout,
          say: (line) => io.stdout(`${line}\n`),
        });
        if (report.recorded) {
          io.stdout(
            `prefix "${target.prefix}" at ${describeWhere(target)} held no data: nothing to move; recorded ${layout.describe()} as its layout (key ${layoutRecordKey(target.prefix, layout.tagged)}), so that bridges with another redis.shards refuse it\n`,
          );
        } else if (report.unchanged) {
          io.stdout(`prefix "${target.prefix}" already has ${layout.describe()}: nothing to do\n`);
        }
      } catch (error) {
        if (error instanceof ReshardError) {
          throw new CliError(error.message, { code: error.code, exitCode: EXIT.unavailable, cause: error });
        }
        throw error;
      }
    });
  });
}
