import type { Logger } from 'pino';

/**
 * What a running bridge says while Redis is away: one warning when it goes, one every interval
 * while it stays away, one line when it is back, instead of one line (and a stack trace) per
 * reconnect attempt of each of its half-dozen connections.
 */
export interface OutageReporter {
  /** A connection error; returns the warning to log, or null when one was logged recently. */
  down(error: string): string | null;
  /** Redis answered; returns the line to log when it ends an outage, else null. */
  up(): string | null;
  isDown(): boolean;
}

export function createOutageReporter(options: {
  address: string;
  intervalMs: number;
  now?: () => number;
}): OutageReporter {
  const now = options.now ?? Date.now;
  let since: number | null = null;
  let lastWarnedAt = 0;
  const every = `${Math.round(options.intervalMs / 1000)} s`;
  return {
    down(error) {
      const at = now();
      if (since === null) {
        since = at;
        lastWarnedAt = at;
        return `Redis at ${options.address} is unreachable (${error}): webhooks are answered 503 (the platform retries them), /readyz says 503, the worker waits; reconnecting by itself, next report in ${every}`;
      }
      if (at - lastWarnedAt < options.intervalMs) return null;
      lastWarnedAt = at;
      return `Redis at ${options.address} still unreachable after ${Math.round((at - since) / 1000)} s (${error}); check that it runs and that redis.url is right`;
    },
    up() {
      if (since === null) return null;
      const seconds = Math.round((now() - since) / 1000);
      since = null;
      return `Redis at ${options.address} is reachable again after ${seconds} s: taking webhooks and jobs`;
    },
    isDown: () => since !== null,
  };
}

/**
 * Errors that only say "Redis is not reachable right now" (the outage report covers them): socket
 * errors, and what ioredis says when a cluster's nodes or a Sentinel setup's sentinels are all gone
 * (a cluster client repeats "Failed to refresh slots cache." on every reconnect attempt: 2,650
 * lines in 45 s).
 */
const CONNECTION_ERROR =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|Connection is closed|connect ETIMEDOUT|max retries per request|Stream isn't writeable|Redis (does not|is not)|Failed to refresh slots cache|None of startup nodes is available|Cluster is (ended|disconnect)|Cluster isn't ready|CLUSTERDOWN|Too many Cluster redirections|All sentinels are unreachable/i;

export function isConnectionError(text: string): boolean {
  return CONNECTION_ERROR.test(text);
}

function errorText(args: readonly unknown[]): string | null {
  const [first] = args;
  if (first instanceof Error) return first.message;
  if (first && typeof first === 'object' && 'err' in first) {
    const err = (first as { err: unknown }).err;
    if (typeof err === 'string') return err;
    if (err instanceof Error) return err.message;
  }
  return null;
}

/**
 * A logger that drops warn/error lines about Redis connection errors while `isDown()` says an
 * outage is being reported, and otherwise keeps at most one such line per message per interval.
 * Everything else passes through untouched; children are wrapped the same way.
 */
export function quietConnectionErrors(
  logger: Logger,
  options: { isDown: () => boolean; intervalMs: number; now?: () => number },
): Logger {
  const now = options.now ?? Date.now;
  const lastByMessage = new Map<string, number>();
  const wrap = (target: Logger): Logger =>
    new Proxy(target, {
      get(object, property, receiver) {
        if (property === 'child') {
          return (...args: Parameters<Logger['child']>) => wrap(object.child(...args) as unknown as Logger);
        }
        if (property === 'warn' || property === 'error') {
          const method = object[property].bind(object) as (...args: unknown[]) => void;
          return (...args: unknown[]) => {
            const error = errorText(args);
            if (error !== null && isConnectionError(error)) {
              if (options.isDown()) return;
              const message = String(args.find((arg) => typeof arg === 'string') ?? error);
              const at = now();
              const last = lastByMessage.get(message);
              if (last !== undefined && at - last < options.intervalMs) return;
              lastByMessage.set(message, at);
            }
            method(...args);
          };
        }
        const value = Reflect.get(object, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
      },
    });
  return wrap(logger);
}
