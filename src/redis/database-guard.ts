import { Redis, type RedisOptions } from 'ioredis';
import { ConvoBridgeError } from '../base/errors.js';

/**
 * A Redis that refused the configured database: `SELECT 99` on a server with
 * 16 databases, or any SELECT on a Redis Cluster node. ioredis only emits the refusal as an
 * 'error' event and goes on in database 0, where a reshard or a worker would change another
 * application's data; a client of DatabaseGuardedRedis rejects every command with this error
 * instead.
 */
export class RedisDatabaseError extends ConvoBridgeError {
  readonly database: number;
  /** Redis's own answer to the SELECT. */
  readonly reply: string;

  constructor(where: DatabaseWhere, database: number, reply: string, options: { cause?: unknown } = {}) {
    super(databaseRefusedMessage(where, database, reply), {
      code: 'REDIS_DATABASE_REFUSED',
      cause: options.cause,
    });
    this.name = 'RedisDatabaseError';
    this.database = database;
    this.reply = reply;
  }
}

/** Where the database was asked for, for the message: the address and which setting names it. */
export interface DatabaseWhere {
  /** `host:port`, or the Sentinel primary in words. */
  readonly address: string;
  /** `url` (the database is the URL's path) or `sentinel` (redis.db). */
  readonly kind: 'url' | 'sentinel';
}

function databaseRefusedMessage(where: DatabaseWhere, database: number, reply: string): string {
  const refused = `Redis at ${where.address} refused database ${database} (${reply})`;
  const setting = where.kind === 'url' ? 'the /N of the URL' : 'redis.db';
  if (/cluster mode/i.test(reply)) {
    return `${refused}: it is a node of a Redis Cluster, which has only database 0: drop ${setting}, or list the nodes under redis.cluster.nodes`;
  }
  if (/NOPERM/.test(reply)) {
    return `${refused}: the ACL user may not use it: allow SELECT of database ${database} for that user, or give the database the user may use in ${setting}`;
  }
  return `${refused}: databases are 0..N-1 on this server (N is its "databases" setting, 16 by default; CONFIG GET databases where allowed): give one of them in ${setting}, or raise "databases" in redis.conf`;
}

/** The replies that mean "not this database" (not a lost connection or a missing password). */
const REFUSAL = /DB index|out of range|not an integer|cluster mode|NOPERM|invalid/i;

/** Whether an ioredis 'error' event is a refused SELECT (or the guard's error after one). */
export function isDatabaseRefusal(error: unknown): boolean {
  if (error instanceof RedisDatabaseError) return true;
  const command = (error as { command?: { name?: unknown } } | null)?.command;
  return (
    error instanceof Error &&
    error.name === 'ReplyError' &&
    command?.name === 'select' &&
    REFUSAL.test(error.message)
  );
}

/**
 * An ioredis client that never runs a command in another database than the configured one:
 * once a SELECT of that database is refused (at connect or at any reconnect), every command
 * fails with RedisDatabaseError. The refusal's reply reaches the client before the ready check's
 * (Redis answers one connection in order) and both settle one promise step later, so the flag is
 * set before ioredis sends the commands queued while connecting.
 */
export class DatabaseGuardedRedis extends Redis {
  private refused: RedisDatabaseError | undefined;
  private readonly where: DatabaseWhere;

  /** `args`: what `new Redis` takes, a URL and options or options alone. */
  constructor(where: DatabaseWhere, ...args: [url: string, options: RedisOptions] | [options: RedisOptions]) {
    // Both forms are overloads of ioredis's constructor; TypeScript cannot pick one for a union.
    super(...(args as [string, RedisOptions]));
    this.where = where;
  }

  /** The refusal, once a SELECT of the configured database failed. */
  get databaseRefused(): RedisDatabaseError | undefined {
    return this.refused;
  }

  override sendCommand(...[command, stream]: Parameters<Redis['sendCommand']>): unknown {
    // QUIT touches no data: let a refused client close politely.
    if (this.refused !== undefined && command.name !== 'quit') {
      command.reject(this.refused);
      return command.promise;
    }
    const sent = super.sendCommand(command, stream);
    if (command.name.toLowerCase() === 'select') {
      const database = Number(command.args[0]);
      command.promise.catch((error: unknown) => {
        const reply = error instanceof Error ? error.message : String(error);
        if (error instanceof Error && error.name === 'ReplyError' && REFUSAL.test(reply)) {
          this.refused ??= new RedisDatabaseError(this.where, database, reply, { cause: error });
        }
      });
    }
    return sent;
  }

  /** BullMQ duplicates a worker's connection for its blocking commands: keep the guard. */
  override duplicate(override?: Partial<RedisOptions>): Redis {
    return new DatabaseGuardedRedis(this.where, { ...this.options, ...override });
  }
}
