import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  createOutageReporter,
  isConnectionError,
  quietConnectionErrors,
} from '../../../src/bridge/redis-outage.js';

describe('createOutageReporter: one warning per interval while Redis is away', () => {
  it('warns at the first error, then at most once per interval, and says when Redis is back', () => {
    let now = 0;
    const reporter = createOutageReporter({ address: '10.0.0.5:6379', intervalMs: 30_000, now: () => now });
    expect(reporter.up()).toBeNull();
    expect(reporter.down('connect ECONNREFUSED 10.0.0.5:6379')).toMatch(
      /^Redis at 10\.0\.0\.5:6379 is unreachable \(connect ECONNREFUSED 10\.0\.0\.5:6379\): webhooks are answered 503/,
    );
    const lines: (string | null)[] = [];
    for (now = 500; now < 60_000; now += 500) lines.push(reporter.down('connect ECONNREFUSED'));
    expect(lines.filter((line) => line !== null)).toEqual([
      'Redis at 10.0.0.5:6379 still unreachable after 30 s (connect ECONNREFUSED); check that it runs and that redis.url is right',
    ]);
    expect(reporter.isDown()).toBe(true);
    now = 61_000;
    expect(reporter.up()).toBe(
      'Redis at 10.0.0.5:6379 is reachable again after 61 s: taking webhooks and jobs',
    );
    expect(reporter.isDown()).toBe(false);
  });
});

describe('quietConnectionErrors', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    return { lines, logger: pino({ level: 'info' }, stream) };
  };

  it('drops connection errors during a reported outage, keeps everything else, children included', () => {
    const { lines, logger } = capture();
    let down = true;
    const quiet = quietConnectionErrors(logger, { isDown: () => down, intervalMs: 30_000 }).child({
      mode: 'start',
    });
    quiet.error({ err: 'connect ECONNREFUSED 127.0.0.1:6379' }, 'events worker error');
    quiet.warn({ err: 'Connection is closed.' }, 'redis (worker commands) connection error');
    quiet.warn({ err: 'conversation not found' }, 'events job will be retried');
    quiet.info('worker started');
    expect(lines.map((line) => line.msg)).toEqual(['events job will be retried', 'worker started']);
    down = false;
    quiet.error({ err: 'connect ECONNREFUSED 127.0.0.1:6379' }, 'events worker error');
    quiet.error({ err: 'connect ECONNREFUSED 127.0.0.1:6379' }, 'events worker error');
    expect(lines.filter((line) => line.msg === 'events worker error')).toHaveLength(1);
    expect(lines.at(-1)?.mode).toBe('start');
  });
});

describe('isConnectionError: what ioredis says when a whole cluster or Sentinel setup is gone', () => {
  it.each([
    'Failed to refresh slots cache.',
    'None of startup nodes is available',
    'Cluster is ended.',
    "Cluster isn't ready and enableOfflineQueue options is false",
    'CLUSTERDOWN The cluster is down',
    'Too many Cluster redirections. Last error: Error: Connection is closed.',
    'All sentinels are unreachable. Retrying from scratch after 1000ms.',
  ])('%s', (text) => {
    expect(isConnectionError(text)).toBe(true);
  });

  it('is not every error', () => {
    expect(isConnectionError('conversation not found')).toBe(false);
    expect(isConnectionError('only 0 of 1 Redis replica(s) confirmed the event within 500 ms')).toBe(false);
  });
});
