import { Redis } from 'ioredis';
import { describeError } from '../base/errors.js';
import { checkRedisUrl } from '../config/redis-url.js';
import { hasRedisServerBinary, startRedisServer } from '../redis/start-redis-server.js';
import { DemoError } from './demo-error.js';

/**
 * The demo's Redis: REDIS_URL when set; otherwise a private `redis-server` (append-only file on, in
 * a temp dir that is removed at the end); otherwise a DEMO_REDIS_MISSING error that says how to
 * get one. Keys live under a prefix unique to the run, so a shared Redis is never disturbed.
 */
export interface DemoRedis {
  readonly url: string;
  /** `REDIS_URL` (shared: the demo deletes its own keys at the end) or `private redis-server`. */
  readonly source: 'REDIS_URL' | 'private redis-server';
  stop(): Promise<void>;
}

export const DEMO_REDIS_HINT =
  'install it with `apt-get install redis-server` (then run the demo again), ' +
  'or start one with `docker compose up redis` and run `REDIS_URL=redis://127.0.0.1:6379 npm run demo`';

async function checkReachable(url: string): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new DemoError(
      'DEMO_REDIS_MISSING',
      `REDIS_URL is set but Redis does not answer there (${describeError(error)}): start it, fix REDIS_URL, ` +
        'or unset REDIS_URL to let the demo start a private redis-server',
      { cause: error },
    );
  } finally {
    probe.disconnect();
  }
}

export async function provideRedis(env: NodeJS.ProcessEnv): Promise<DemoRedis> {
  const fromEnv = env.REDIS_URL?.trim();
  if (fromEnv) {
    const checked = checkRedisUrl(fromEnv);
    if (!checked.ok) throw new DemoError('DEMO_REDIS_MISSING', `REDIS_URL ${checked.message}`);
    await checkReachable(fromEnv);
    return { url: fromEnv, source: 'REDIS_URL', stop: async () => {} };
  }
  if (!hasRedisServerBinary()) {
    throw new DemoError(
      'DEMO_REDIS_MISSING',
      `the demo needs Redis: REDIS_URL is not set and there is no \`redis-server\` on the PATH. ${DEMO_REDIS_HINT}`,
    );
  }
  try {
    const server = await startRedisServer({ appendOnly: true });
    return { url: server.url, source: 'private redis-server', stop: () => server.stop() };
  } catch (error) {
    throw new DemoError(
      'DEMO_START_FAILED',
      `could not start a private redis-server: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
}
