import type { Logger } from 'pino';
import { describeError } from '../base/errors.js';
import { settleWithin } from '../base/settle-within.js';
import type { ConfigWatcher } from '../config/watch-config.js';
import type { TracingHandle } from '../observe/set-up-tracing.js';
import { closeConnection } from '../redis/close-connection.js';
import { anyPrimaryAnswers } from '../redis/ping-primaries.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { BridgeState } from './bridge-state.js';
import type { OutageReporter } from './redis-outage.js';

/** Longest wait for each part to close when Redis is unreachable at shutdown. */
const UNREACHABLE_CLOSE_MS = 2_000;
/** Longest wait for the receiver to close (its own steps are bounded at 1 s each). */
const RECEIVER_CLOSE_MS = 3_000;
/**
 * What the worker may take beyond its grace: its closing steps are bounded (1 s each); this is the
 * last resort should one of them still hang.
 */
const WORKER_CLOSE_MARGIN_MS = 4_000;
/** How often (and how long) the shutdown asks whether Redis went away while jobs were finishing. */
const REDIS_WATCH_MS = 250;

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
  /**
   * The worker: finishes in-flight jobs within its grace (0: at once), or until `redisGone` aborts.
   */
  worker: { close(graceMs?: number, redisGone?: AbortSignal): Promise<void> } | undefined;
  /** `worker.shutdown_grace`: with the margin above, the longest a stop waits for the worker. */
  graceMs: number;
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
 * worker closed (in-flight jobs finished), then the control connection and tracing. Every step is
 * bounded, so that a stop ends within `worker.shutdown_grace` and a few seconds whatever Redis does
 * (gone before the stop, or going while jobs finish); what could not finish stays in
 * Redis for the next worker.
 */
export function createShutdown(parts: ShutdownParts): Shutdown {
  const { state, log, outage, redis, address, watcher, closeHttp, receiver, tracing } = parts;
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
      await settleWithin(
        receiver
          ?.close()
          .catch((error: unknown) => log.warn({ err: describeError(error) }, 'receiver close')),
        redisAway ? UNREACHABLE_CLOSE_MS : RECEIVER_CLOSE_MS,
      );
      await closeWorker(parts, redisAway);
      await closeConnection(redis);
      await tracing?.shutdown();
      log.info('stopped');
      resolveStopped(state.exitCode);
    })();
    return stopping;
  };
  return { stop, stopped };
}

/** The worker's close, cut short when Redis goes away while its jobs finish (they cannot). */
async function closeWorker(parts: ShutdownParts, redisAway: boolean): Promise<void> {
  const { worker, log, graceMs } = parts;
  if (!worker) return;
  const redisGone = new AbortController();
  const closed = worker
    .close(redisAway ? 0 : graceMs, redisGone.signal)
    .catch((error: unknown) => log.warn({ err: describeError(error) }, 'worker close'));
  if (!redisAway) void watchRedisGone(parts, closed, redisGone);
  await settleWithin(closed, redisAway ? UNREACHABLE_CLOSE_MS : graceMs + WORKER_CLOSE_MARGIN_MS);
  redisGone.abort();
}

/**
 * Aborts `redisGone` once Redis is known unreachable (the outage report) or no primary answered two
 * checks in a row, until `closed` settles.
 */
async function watchRedisGone(
  parts: ShutdownParts,
  closed: Promise<unknown>,
  redisGone: AbortController,
): Promise<void> {
  let done = false;
  void closed.finally(() => {
    done = true;
  });
  let silent = 0;
  while (!done && !redisGone.signal.aborted) {
    await settleWithin(closed, REDIS_WATCH_MS);
    if (done) return;
    silent = (await anyPrimaryAnswers(parts.redis, REDIS_WATCH_MS)) ? 0 : silent + 1;
    if (parts.outage.isDown() || silent >= 2) redisGone.abort();
  }
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
