import type { Redis } from 'ioredis';

/**
 * A Lua script bound to a name. ioredis sends it by EVALSHA and falls back to EVAL after a
 * restart flushed the script cache, so scripts survive Redis restarts.
 */
export function defineRedisScript<TResult>(name: string, numberOfKeys: number, lua: string) {
  const commandName = `convoBridge${name}`;
  return (redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<TResult> => {
    const commands = redis as unknown as Record<string, (...values: (string | number)[]) => Promise<TResult>>;
    if (typeof commands[commandName] !== 'function') redis.defineCommand(commandName, { numberOfKeys, lua });
    const command = commands[commandName];
    if (!command) throw new Error(`redis script ${commandName} could not be defined`);
    return command.call(redis, ...keys, ...args);
  };
}
