import type { Logger } from 'pino';

/**
 * TEST ONLY: `CONVO_BRIDGE_TEST_CLOCK_OFFSET_MS` shifts the worker's clock (rules, windows,
 * business-time timers) by that many milliseconds, so an end-to-end test can start a bridge at a
 * chosen wall-clock moment (a Friday evening) and watch a timer fire at a real instant.
 * Never set it in production: replies would be judged against a wrong clock.
 */
export const TEST_CLOCK_ENV = 'CONVO_BRIDGE_TEST_CLOCK_OFFSET_MS';

export function testClock(env: NodeJS.ProcessEnv, log: Logger): (() => Date) | undefined {
  const text = env[TEST_CLOCK_ENV];
  if (text === undefined || text === '') return undefined;
  const offset = Number(text);
  if (!Number.isSafeInteger(offset)) {
    throw new Error(
      `${TEST_CLOCK_ENV}=${JSON.stringify(text)} is not a whole number of milliseconds: unset it (it is for tests only)`,
    );
  }
  log.warn({ offsetMs: offset }, `${TEST_CLOCK_ENV} is set: the worker's clock is shifted (tests only)`);
  return () => new Date(Date.now() + offset);
}
