import { setTimeout as sleep } from 'node:timers/promises';
import { ConvoBridgeError } from '../../base/errors.js';
import type { RedisClient } from '../../redis/redis-client.js';
import { defineRedisScript } from '../../redis/redis-script.js';

/**
 * A distributed outbound call budget (GCRA, the "generic cell rate algorithm"), shared by every
 * worker process through RedisClient: at most `max` calls per `perMs`, spaced evenly, with a small burst.
 * Each caller reserves the next free slot atomically and sleeps until it, so callers are served in
 * order and the platform never sees more than the budget (earlier form: 100 requests/minute).
 *
 * KEYS[1]: state key (theoretical arrival time, ms). ARGV: now, interval, tolerance, max wait.
 * Returns the ms to wait before calling, or -1 when the wait would exceed the max (nothing reserved).
 */
const RESERVE_LUA = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
if wait > tonumber(ARGV[4]) then return -1 end
local nextTat = tat + interval
redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now + interval + 1000))
return math.ceil(wait)
`;
const reserveScript = defineRedisScript<number>('CallBudget', 1, RESERVE_LUA);

export class CallBudgetExhaustedError extends ConvoBridgeError {
  readonly waitedLongerThanMs: number;
  constructor(maxWaitMs: number) {
    super(
      `the platform call budget has no slot within ${maxWaitMs} ms; the work is retried later ` +
        '(raise platform.rate_limit if your plan allows more calls)',
      { code: 'CALL_BUDGET_EXHAUSTED' },
    );
    this.waitedLongerThanMs = maxWaitMs;
  }
}

export interface CallBudgetOptions {
  redis: RedisClient;
  key: string;
  max: number;
  perMs: number;
  /** Calls allowed back to back before spacing applies (default 1: perfectly even). */
  burst?: number;
  /** Longest a caller waits for a slot before giving up (default 30 s). */
  maxWaitMs?: number;
  now?: () => number;
}

export interface CallBudget {
  /** Waits for a slot; throws CallBudgetExhaustedError when none comes within maxWaitMs. */
  take(signal?: AbortSignal): Promise<void>;
}

export function createCallBudget(options: CallBudgetOptions): CallBudget {
  const interval = options.perMs / options.max;
  const tolerance = interval * Math.max(0, (options.burst ?? 1) - 1);
  const maxWait = options.maxWaitMs ?? 30_000;
  const now = options.now ?? Date.now;
  return {
    async take(signal) {
      const wait = await reserveScript(options.redis, [options.key], [now(), interval, tolerance, maxWait]);
      if (wait < 0) throw new CallBudgetExhaustedError(maxWait);
      if (wait > 0) await sleep(wait, undefined, signal ? { signal } : undefined);
    },
  };
}
