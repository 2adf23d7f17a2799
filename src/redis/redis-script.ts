import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client.js';

/**
 * A Lua script bound to a name. It is sent by EVALSHA, and by EVAL when RedisClient answers NOSCRIPT
 * (after a restart flushed the script cache), so scripts survive RedisClient restarts.
 *
 * It deliberately does not use ioredis `defineCommand`: defining a command lazily on a connection
 * with `enableAutoPipelining` (then the receiver's producer) while an auto-pipeline is pending made
 * ioredis queue the call on a pipeline that lacks the command, which rejected the call and then
 * crashed the process with an uncaught "results[i] is not iterable" (ioredis 5.11). EVALSHA and
 * EVAL are ordinary commands and pipeline safely.
 */
export function defineRedisScript<TResult>(name: string, numberOfKeys: number | 'any', lua: string) {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<TResult> => {
    if (numberOfKeys !== 'any' && keys.length !== numberOfKeys) {
      throw new Error(`redis script ${name} takes ${numberOfKeys} keys, got ${keys.length}`);
    }
    try {
      return (await redis.evalsha(sha, keys.length, ...keys, ...args)) as TResult;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(lua, keys.length, ...keys, ...args)) as TResult;
    }
  };
}
