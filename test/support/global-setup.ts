import type { TestProject } from 'vitest/node';
import {
  hasRedisServerBinary,
  REDIS_INSTALL_HINT,
  startRedisServer,
} from '../../src/redis/start-redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis every integration test may use, each with its own queue names and key prefix. */
    redisUrl: string;
  }
}

/**
 * One Redis for the whole run: REDIS_URL when set; else a private `redis-server` on a free port;
 * else a testcontainers Redis where a Docker engine answers. Tests that stop or kill Redis start
 * their own server (see test/support/redis.ts) and never touch this one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return async () => {};
  }
  if (hasRedisServerBinary()) {
    const server = await startRedisServer();
    project.provide('redisUrl', server.url);
    return () => server.stop();
  }
  const container = await startRedisContainer();
  if (container) {
    project.provide('redisUrl', container.url);
    return container.stop;
  }
  throw new Error(`the tests need Redis: ${REDIS_INSTALL_HINT}`);
}

async function startRedisContainer(): Promise<{ url: string; stop: () => Promise<void> } | undefined> {
  try {
    const { GenericContainer, getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    const started = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    return {
      url: `redis://${started.getHost()}:${started.getMappedPort(6379)}`,
      stop: async () => {
        await started.stop();
      },
    };
  } catch {
    return undefined;
  }
}
