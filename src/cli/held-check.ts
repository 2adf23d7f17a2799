import { describeError } from '../base/errors.js';
import type { LoadedConfig } from '../config/load-config.js';
import { layoutFor } from '../queue/key-layout.js';
import { readOnlyQueue } from '../queue/read-only-queue.js';
import { QUEUE_NAMES } from '../queue/redis-keys.js';
import { heldFix } from '../worker/businesses/business-table.js';
import { countHeldJobs, describeHeldCount } from '../worker/businesses/held-jobs.js';
import { connectRedisTarget, describeWhere, resolveRedisTarget } from './redis-target.js';

/** How long `validate` waits for Redis before saying it could not check. */
const CHECK_TIMEOUT_MS = 1_500;

/**
 * What a bridge of this config would hold, read from its Redis: the events and timers whose
 * business the config does not have (removed, or the single business's when no business says
 * `takes_over: default`), each with its count and the one fix. Lines for stderr; one line saying
 * it could not check when Redis does not answer (validate never fails for it).
 */
export async function describeHeldForConfig(
  path: string,
  loaded: LoadedConfig,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  if (loaded.missingEnv.some((variable) => variable.path[0] === 'redis')) {
    return ['note: jobs held for businesses not in this config: not checked (redis: uses an unset variable)'];
  }
  let target: Awaited<ReturnType<typeof resolveRedisTarget>>;
  try {
    target = await resolveRedisTarget({ config: path }, env, undefined, 'any');
  } catch (error) {
    return [`note: jobs held for businesses not in this config: not checked (${describeError(error)})`];
  }
  let redis: Awaited<ReturnType<typeof connectRedisTarget>>;
  try {
    redis = await connectRedisTarget(target, { timeoutMs: CHECK_TIMEOUT_MS });
  } catch (error) {
    return [
      `note: jobs held for businesses not in this config: not checked, Redis at ${describeWhere(target)} did not answer (${describeError(error)})`,
    ];
  }
  try {
    const layout = layoutFor(loaded.config.redis);
    const shards = layout.all.map((shard) => ({
      events: readOnlyQueue(QUEUE_NAMES.events, redis, shard.queuePrefix),
      timers: readOnlyQueue(QUEUE_NAMES.timers, redis, shard.queuePrefix),
    }));
    const served = new Set(loaded.businesses.map((business) => business.naming.tag));
    const { held, complete } = await countHeldJobs(shards, served);
    await Promise.all(shards.flatMap((shard) => [shard.events.close(), shard.timers.close()]));
    return [...held].map(
      ([tag, count]) =>
        `warning: held: ${complete ? '' : 'at least '}${describeHeldCount(count)} of ${tag === '' ? 'the single business (a config without businesses:)' : `business "${tag}"`} wait in Redis at ${describeWhere(target)}, and this config has no business for them: ${heldFix(tag)}`,
    );
  } catch (error) {
    return [`note: jobs held for businesses not in this config: not checked (${describeError(error)})`];
  } finally {
    redis.disconnect();
  }
}
