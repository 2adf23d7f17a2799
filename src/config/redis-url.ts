import { redactUrl } from '../base/redact-url.js';

/**
 * A Redis URL as `redis.url`, `--redis-url` and `$REDIS_URL` take it:
 * `redis://[user:password@]host[:port][/db]`, or `rediss://...` for TLS. ioredis reads the path
 * as the database with parseInt, so `/abc` became NaN (every command then failed with "ERR value
 * is not an integer") and `/2x` database 2: the database part is checked here, once, for every
 * way a URL comes in. Whether the server has that database is only known at connect time
 * (redis/database-guard.ts). Messages never hold a password.
 */
export type RedisUrlCheck =
  | { readonly ok: true; readonly database: number }
  | { readonly ok: false; readonly message: string };

export const REDIS_URL_FORM = 'redis://[user:password@]host:port[/db] (rediss:// for TLS)';

const DATABASE = /^\/(\d{1,9})\/?$/;

/** Whether `text` is a usable Redis URL, and which database it names (0 without a `/db`). */
export function checkRedisUrl(text: string): RedisUrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      ok: false,
      message: `is not a valid Redis URL (a port from 1 to 65535, a password with / ? # @ written %2F %3F %23 %40): write ${REDIS_URL_FORM}, e.g. redis://127.0.0.1:6379`,
    };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    return { ok: false, message: `must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379` };
  }
  if (url.hostname === '') return { ok: false, message: `names no host: write ${REDIS_URL_FORM}` };
  if (url.port === '0') {
    return { ok: false, message: `${redactUrl(text)}: port 0 is not a port: give one from 1 to 65535` };
  }
  if (url.searchParams.has('db')) {
    return {
      ok: false,
      message: `${redactUrl(text)}: give the database as the URL's path (redis://host:port/2), not as ?db=`,
    };
  }
  return databaseOfPath(url, text);
}

function databaseOfPath(url: URL, text: string): RedisUrlCheck {
  const path = url.pathname;
  if (path === '' || path === '/') return { ok: true, database: 0 };
  const digits = DATABASE.exec(path)?.[1];
  if (digits === undefined) {
    const origin = `${url.protocol}//${url.host}`;
    return {
      ok: false,
      message: `${redactUrl(text)}: the database part "${decodeURIComponentSafe(path.slice(1))}" is not a database number: write a whole number 0 or more after the port (${origin}/2 for database 2; ${origin} for database 0)`,
    };
  }
  return { ok: true, database: Number(digits) };
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The database a URL names (0 without one, or for a URL checkRedisUrl refuses). */
export function databaseOfRedisUrl(text: string): number {
  const checked = checkRedisUrl(text);
  return checked.ok ? checked.database : 0;
}
