import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyLayout } from '../../../src/queue/key-layout.js';
import { claimLayout } from '../../../src/queue/layout-record.js';
import { quarantineBody } from '../../../src/receive/quarantine-store.js';
import { storeRecordedEvent } from '../../../src/record/event-store.js';
import { recordedLine } from '../../../src/record/recorded-event.js';
import type { RedisServerHandle } from '../../../src/redis/start-redis-server.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { addDeadLetter } from '../../../src/worker/failures/dead-letters.js';
import { createTimerScheduler } from '../../../src/worker/timers/timers.js';
import { cli } from '../../support/cli-in-process.js';
import { deadLetterFixture } from '../../support/dead-letter-fixture.js';
import { makeEvent } from '../../support/make-event.js';
import { startRedisServer } from '../../support/redis.js';
import { runNode } from '../../support/run-node.js';

// Issue 30, items 4 and 5: operator commands read the database they were given and nothing else,
// write nothing when they only look, and exit as soon as they have said why they cannot.

const CLI = join(process.cwd(), 'dist', 'cli.js');
const runBuilt = (args: string[], timeoutMs = 20_000) =>
  runNode([CLI, ...args], { ...process.env, REDIS_URL: '', CONVO_BRIDGE_CONFIG: '' }, timeoutMs);

const DATA_DB = 3;
const PREFIX = 'ro';

const deadLetter = (id: string, conversationId: string) => deadLetterFixture(id, conversationId);

/** Every key of one database with its type, value (DUMP) and absolute expiry: what a write changes. */
async function snapshot(url: string): Promise<{ size: number; keys: string[] }> {
  const redis = new Redis(url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const dump = await redis.dumpBuffer(key);
        const expiry = await redis.call('PEXPIRETIME', key);
        keys.push(`${key} ${await redis.type(key)} ${String(expiry)} ${dump?.toString('hex') ?? 'gone'}`);
      }
    } while (cursor !== '0');
    return { size: await redis.dbsize(), keys: keys.sort() };
  } finally {
    redis.disconnect();
  }
}

/** The looking commands of issue 30, item 5 (`ids`: a dead letter's and a quarantined body's). */
const readOnlyCommands = (url: string, ids: { dead: string; quarantined: string }) => {
  const at = ['--redis-url', url, '--prefix', PREFIX];
  return [
    ['reshard', '--to', '3', '--check', ...at],
    ['reshard', '--to', '1', '--check', ...at],
    ['timers', 'list', ...at],
    ['timers', 'list', '--conversation', 'conv-a', ...at],
    ['dlq', 'list', ...at],
    ['dlq', 'show', ids.dead, ...at],
    ['quarantine', 'list', ...at],
    ['quarantine', 'show', ids.quarantined, ...at],
    ['events', 'list', ...at],
    ['events', 'show', '1', ...at],
    ['events', 'export', ...at],
  ];
};

describe('read-only operator commands write nothing, in the database they were given', () => {
  let server: RedisServerHandle;
  let quarantined = '';
  const dataUrl = () => `${server.url}/${DATA_DB}`;

  beforeAll(async () => {
    server = await startRedisServer();
    const redis = new Redis(dataUrl());
    const layout = createKeyLayout({ prefix: PREFIX, shards: 1, tagged: false });
    await claimLayout(redis, layout);
    await addDeadLetter(redis, layout.global, deadLetter('ev-one-1', 'conv-a'));
    quarantined = (
      await quarantineBody(
        { redis, keys: layout.global },
        {
          rawBody: Buffer.from('{"event":"channel.message_reaction"}'),
          reason: 'unknown_event',
          message: 'unknown event name',
          eventName: 'channel.message_reaction',
          conversationId: null,
          receivedAt: new Date(),
        },
      )
    ).entry.id;
    const { seq: _seq, ...line } = recordedLine({
      now: new Date(),
      event: makeEvent({ key: 'e|1', messageId: 'm1', text: 'halo' }),
      facts: { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} },
      plan: { matched: [], actions: [], blocked: [] },
    });
    await storeRecordedEvent(redis, layout.global, line, { maxCount: 100, maxAgeMs: 86_400_000 });
    const timers = new Queue('timers', { connection: redis, prefix: layout.shardOf('conv-a').queuePrefix });
    await createTimerScheduler(redis, layout.global, timers).schedule({
      timerId: 'tm-a-1',
      conversationId: 'conv-a',
      delayMs: 3_600_000,
      unless: ['agent_reply'],
      actions: [],
      event: makeEvent({ conversationId: 'conv-a' }),
      rule: 'follow-up',
    });
    await timers.close();
    redis.disconnect();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('on an empty database: no key appears (DBSIZE and a scan before and after each command)', async () => {
    const emptyUrl = `${server.url}/5`;
    for (const args of readOnlyCommands(emptyUrl, { dead: 'ev-none', quarantined: 'q-none' })) {
      const result = await cli(args);
      expect([0, 1, 2], `${args.join(' ')}: ${result.stderr}`).toContain(result.code);
      expect(await snapshot(emptyUrl), args.join(' ')).toEqual({ size: 0, keys: [] });
    }
  });

  it('on a database holding data: no key, value or expiry changes, and the data is found there', async () => {
    const before = await snapshot(dataUrl());
    expect(before.size).toBeGreaterThan(5);
    const beforeDb0 = await snapshot(server.url);
    for (const args of readOnlyCommands(dataUrl(), { dead: 'ev-one-1', quarantined })) {
      const result = await cli(args);
      expect([0, 2], `${args.join(' ')}: ${result.stderr}`).toContain(result.code);
      expect(await snapshot(dataUrl()), args.join(' ')).toEqual(before);
    }
    expect(await snapshot(server.url)).toEqual(beforeDb0);
  });

  it('listings name the database they read, in the header and in the empty hint', async () => {
    const dlq = await cli(['dlq', 'list', '--redis-url', dataUrl(), '--prefix', PREFIX]);
    expect(dlq.stdout).toMatch(
      new RegExp(`^1 dead letter\\(s\\) under prefix "${PREFIX}" at 127\\.0\\.0\\.1:\\d+ db ${DATA_DB}\\n`),
    );
    const none = await cli(['dlq', 'list', '--redis-url', `${server.url}/4`, '--prefix', PREFIX]);
    expect(none.stdout).toMatch(
      /^no dead letters under prefix "ro" at 127\.0\.0\.1:\d+ db 4 \(from --redis-url\)/,
    );
  });

  it('reshard --to N on a database without data says it recorded the layout, and only that key', async () => {
    const url = `${server.url}/6`;
    const result = await cli(['reshard', '--to', '3', '--redis-url', url, '--prefix', PREFIX]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`held no data: nothing to move; recorded 3 queue shard(s)`);
    expect(result.stdout).toContain(`(key {${PREFIX}}:bridge:layout)`);
    expect(result.stdout).not.toContain('nothing to do');
    expect((await snapshot(url)).keys.map((k) => k.split(' ')[0])).toEqual([`{${PREFIX}}:bridge:layout`]);
    const again = await cli(['reshard', '--to', '3', '--redis-url', url, '--prefix', PREFIX]);
    expect(again.stdout).toContain('already has 3 queue shard(s)');
    expect(again.stdout).toContain('nothing to do');
  });

  it('--to takes digits only: 1e2 is refused before Redis is read', async () => {
    const result = await cli(['reshard', '--to', '1e2', '--check', '--redis-url', `${server.url}/7`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--to must be a whole number from 1 to 128, got "1e2"');
    expect(await snapshot(`${server.url}/7`)).toEqual({ size: 0, keys: [] });
  });

  it('a database the server does not have stops every command with the URL form to use; database 0 stays untouched', async () => {
    const before = await snapshot(server.url);
    const refused = `${server.url}/99`;
    for (const args of [
      ...readOnlyCommands(refused, { dead: 'x', quarantined: 'y' }),
      ['reshard', '--to', '2', '--redis-url', refused],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(
        `${refused} from --redis-url: Redis at 127.0.0.1:${server.port} refused database 99 (ERR DB index is out of range): databases are 0..N-1 on this server`,
      );
      expect(result.stdout).toBe('');
    }
    expect(await snapshot(server.url)).toEqual(before);
  });
});

describe('the bridge refuses a database the server does not have', () => {
  let server: RedisServerHandle;
  let dir: string;

  beforeAll(async () => {
    server = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), 'bridge-db-'));
  });
  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['serve', 'work', 'start'])(
    '%s exits 1 naming redis.url, and writes nothing to database 0',
    async (mode) => {
      const config = join(dir, `${mode}.yaml`);
      await writeFile(
        config,
        `platform: { base_url: "http://127.0.0.1:9", auth: { scheme: headers, business_id: b, secret: s } }
receiver: { port: ${await findFreePort()}, host: 127.0.0.1, secrets: [ "whsec" ] }
redis: { url: "${server.url}/99", prefix: bdb }
`,
      );
      const result = await runBuilt([mode, '--config', config], 30_000);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toContain(
        `redis.url ${server.url}/99: Redis at 127.0.0.1:${server.port} refused database 99 (ERR DB index is out of range)`,
      );
      expect(await snapshot(server.url)).toEqual({ size: 0, keys: [] });
    },
  );
});

describe('a Redis that never answers', () => {
  let silent: Server;
  let port: number;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts connections and never writes a byte.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('the command says so within its 5 s timeout and exits within 1 s of saying it', async () => {
    const started = Date.now();
    const child = await import('node:child_process');
    const run = child.spawn(
      process.execPath,
      [CLI, 'dlq', 'list', '--redis-url', `redis://127.0.0.1:${port}`],
      {
        env: { ...process.env, REDIS_URL: '', CONVO_BRIDGE_CONFIG: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let saidAt = 0;
    let stderr = '';
    run.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (saidAt === 0 && stderr.includes('\n')) saidAt = Date.now();
    });
    const deadline = setTimeout(() => run.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => run.once('close', (c) => resolve(c)));
    clearTimeout(deadline);
    const exitedAt = Date.now();
    expect(code).toBe(2);
    expect(stderr).toContain(
      `cannot reach Redis at 127.0.0.1:${port} (from --redis-url): no answer within 5000 ms`,
    );
    // Node's start-up comes on top of the 5 s connect timeout; the exit must follow the message.
    expect(saidAt - started).toBeLessThan(5_000 + 3_000);
    expect(exitedAt - saidAt).toBeLessThan(1_000);
  });
});
