import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import type { ConfigWatcher } from '../config/watch-config.js';
import type { TracingHandle } from '../observe/set-up-tracing.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { BridgeState } from './bridge-state.js';
import type { OutageReporter } from './redis-outage.js';

/** Longest wait for each part to close when Redis is unreachable at shutdown. */
const UNREACHABLE_CLOSE_MS = 2_000;

/** The parts a stop closes, in this order. */
export interface ShutdownParts {
  state: BridgeState;
  log: Logger;
  outage: OutageReporter;
  /** The control connection, closed last. */
  redis: RedisClient;
  address: string;
  watcher: ConfigWatcher;
  /** Stops the HTTP server (receiver or health server) taking requests and drains it. */
  closeHttp: (() => Promise<void>) | undefined;
  receiver: { close(): Promise<void> } | undefined;
  /** The worker: finishes in-flight jobs within its grace (0: at once). */
  worker: { close(graceMs?: number): Promise<void> } | undefined;
  tracing: TracingHandle | undefined;
}

export interface Shutdown {
  /** Graceful and idempotent: every call returns the same stop. */
  stop(reason?: string): Promise<void>;
  /** Resolves with `state.exitCode` once everything is closed. */
  stopped: Promise<number>;
}

/**
 * The one shutdown path: readiness off, config watch off, HTTP drained, then the receiver and the
 * worker closed (in-flight jobs finished), then the control connection and tracing.
 */
export function createShutdown(parts: ShutdownParts): Shutdown {
  const { state, log, outage, redis, address, watcher, closeHttp, receiver, worker, tracing } = parts;
  let resolveStopped: (code: number) => void = () => {};
  const stopped = new Promise<number>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  const stop = (reason = 'stop requested') => {
    stopping ??= (async () => {
      state.shuttingDown = true;
      log.info({ reason }, 'shutting down: readiness off, draining HTTP, finishing in-flight jobs');
      watcher.close();
      await closeHttp?.().catch((error: unknown) => log.warn({ err: describeError(error) }, 'HTTP drain'));
      // Without Redis no job can finish (every step writes to it) and closing connections waits
      // for a reconnect that may never come: stop at once, bounded; unfinished jobs are retried.
      const redisAway = outage.isDown() || redis.status !== 'ready';
      if (redisAway) log.warn({ redis: address }, 'Redis is unreachable: not waiting for in-flight jobs');
      const bound = redisAway ? UNREACHABLE_CLOSE_MS : Number.POSITIVE_INFINITY;
      await settleWithin(
        receiver
          ?.close()
          .catch((error: unknown) => log.warn({ err: describeError(error) }, 'receiver close')),
        bound,
      );
      await settleWithin(
        worker
          ?.close(redisAway ? 0 : undefined)
          .catch((error: unknown) => log.warn({ err: describeError(error) }, 'worker close')),
        bound,
      );
      if (redis.status === 'ready') await redis.quit().catch(() => undefined);
      else redis.disconnect();
      await tracing?.shutdown();
      log.info('stopped');
      resolveStopped(state.exitCode);
    })();
    return stopping;
  };
  return { stop, stopped };
}

/** SIGTERM and SIGINT stop the bridge gracefully; a second signal exits at once. */
export function stopOnSignals({ stop, stopped }: Shutdown, log: Logger): void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting now without waiting (unfinished jobs are retried later)');
      process.exit(1);
    }
    void stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  void stopped.then(() => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
}

/** Waits for `promise` for at most `ms` (never rejects: callers log their own errors). */
async function settleWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (promise === undefined) return;
  if (!Number.isFinite(ms)) {
    await promise;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
