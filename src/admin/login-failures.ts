import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { createRepeatSummary } from '../observe/repeat-summary.js';

/** A failed admin login: a wrong username or password (401), or an attempt while locked out (429). */
export type LoginFailure =
  | { outcome: 'refused'; client: string; failures: number; lockedForMs: number }
  | { outcome: 'throttled'; client: string; retryAfterMs: number };

export interface LoginFailureReport {
  note(failure: LoginFailure): void;
  /** Logs what was counted and not logged yet (a closing server). */
  flush(): void;
}

export const LOGIN_FAILURES_METRIC = 'convo_bridge_admin_login_failures_total';

/**
 * Failed admin logins, counted in a metric (ConvoBridgeAdminLoginsFailing watches it) and logged
 * like the repeated 503s: per client address, the first at once, the next ones as one line per
 * interval with their count. The password tried, and the username, are never logged.
 */
export function createLoginFailureReport(options: {
  log: Logger;
  registry: Registry;
  intervalMs: number;
}): LoginFailureReport {
  const { log, intervalMs } = options;
  const counter = new Counter({
    name: LOGIN_FAILURES_METRIC,
    help: 'Failed admin logins by outcome (refused: wrong username or password, answered 401; throttled: answered 429 while the client address is locked out).',
    labelNames: ['outcome'] as const,
    registers: [options.registry],
  });
  // Present from the start, so that the first failures show as an increase.
  counter.inc({ outcome: 'refused' }, 0);
  counter.inc({ outcome: 'throttled' }, 0);
  // Per address, the attempts since its last line, by outcome.
  const since = new Map<string, { refused: number; throttled: number }>();
  const seconds = Math.round(intervalMs / 1000);
  const summary = createRepeatSummary<LoginFailure>({
    intervalMs,
    log: (last, repeated) => {
      const counts = since.get(last.client) ?? { refused: 0, throttled: 0 };
      since.delete(last.client);
      if (repeated === 0) log.warn(fieldsOf(last), firstLine(last));
      else {
        log.warn(
          { ...fieldsOf(last), repeated, ...counts },
          `${repeated} more failed admin login(s) from ${last.client} in the last ${seconds} s: ${counts.refused} wrong username or password, ${counts.throttled} answered 429 while locked out (the other fields are the last one's)`,
        );
      }
    },
  });
  return {
    note(failure) {
      counter.inc({ outcome: failure.outcome });
      const counts = since.get(failure.client) ?? { refused: 0, throttled: 0 };
      counts[failure.outcome] += 1;
      since.set(failure.client, counts);
      summary.note(failure.client, failure);
    },
    flush: () => summary.flush(),
  };
}

function fieldsOf(failure: LoginFailure): Record<string, unknown> {
  return failure.outcome === 'refused'
    ? {
        client: failure.client,
        status: 401,
        failures: failure.failures,
        lockedForS: Math.ceil(failure.lockedForMs / 1000),
      }
    : { client: failure.client, status: 429, retryAfterS: Math.ceil(failure.retryAfterMs / 1000) };
}

function firstLine(failure: LoginFailure): string {
  if (failure.outcome === 'throttled')
    return `admin login from ${failure.client} answered 429: the address is locked out after wrong passwords`;
  const lockout =
    failure.lockedForMs > 0
      ? `; the address is locked out for ${Math.ceil(failure.lockedForMs / 1000)} s`
      : '';
  return `admin login refused from ${failure.client}: wrong username or password (${failure.failures} in a row${lockout})`;
}
