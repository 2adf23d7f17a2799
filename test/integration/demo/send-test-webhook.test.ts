import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const SECRET = 'whsec-send-test-3c9d1e';

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe('convo-bridge send-test-webhook against a real receiver (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let receiver: Receiver;
  let url: string;
  let queue: Queue;

  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = uniqueName('t-sendtest');
    queue = new Queue('events', { connection: redis, prefix });
    receiver = createReceiver({ secrets: [SECRET], redisUrl: testRedisUrl(), prefix });
    url = `${(await receiver.listen(0, '127.0.0.1')).url}/webhooks/platform`;
  });
  afterEach(async () => {
    await receiver.close();
    await queue.close();
    await deleteKeys(redis, `${prefix}:`);
  });

  const storedEvents = async () => {
    const jobs = await queue.getJobs(['waiting', 'active', 'completed', 'delayed', 'prioritized']);
    return jobs.flatMap((job) => EventBatchDataSchema.parse(job.data).events.map((item) => item.event));
  };

  it.each([
    [
      'complaint',
      'current',
      'channel.message_in',
      'message_in',
      'Saya kecewa, paket datang rusak. Minta refund!',
    ],
    ['catalog', 'current', 'channel.message_in', 'message_in', 'Halo, boleh minta katalog terbaru?'],
    ['after-hours', 'current', 'channel.message_in', 'message_in', 'Masih buka? Mau tanya stok.'],
    [
      'ai-unsure',
      'current',
      'ai.message_generated',
      'ai_reply',
      'Maaf Kak, saya tidak tahu apakah COD bisa ke Bandung.',
    ],
    [
      'complaint',
      'earlier',
      'message.incoming',
      'message_in',
      'Saya kecewa, paket datang rusak. Minta refund!',
    ],
    [
      'ai-unsure',
      'earlier',
      'message.sent',
      'message_sent',
      'Maaf Kak, saya tidak tahu apakah COD bisa ke Bandung.',
    ],
  ])('--event %s --form %s is stored as %s (%s)', async (event, form, name, kind, text) => {
    const result = await cli([
      'send-test-webhook',
      '--url',
      url,
      '--secret',
      SECRET,
      '--event',
      event,
      '--form',
      form,
      '--conversation',
      'conv-42',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`POST ${url} (${event}, ${form} form, conversation conv-42)`);
    expect(result.stdout).toContain('HTTP 200\n{"success":true}');
    const events = await storedEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ name, kind, conversationId: 'conv-42', text });
    expect(result.stdout).not.toContain(SECRET);
    // Says that 200 means stored, not acted on (issue 13, item 8).
    expect(result.stdout).toContain(
      'queued: the receiver stored the event; the worker acts on it in the background',
    );
  });

  it('sends the test ping by default (answered success, not stored)', async () => {
    const result = await cli(['send-test-webhook', '--url', url, '--secret', SECRET]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('(test, current form, conversation conv-test-');
    expect(result.stdout).toContain('HTTP 200');
    expect(await storedEvents()).toEqual([]);
  });

  it('gives a new conversation id when none is given', async () => {
    const result = await cli(['send-test-webhook', '--url', url, '--secret', SECRET, '--event', 'catalog']);
    const [event] = await storedEvents();
    expect(event?.conversationId).toMatch(/^conv-test-[0-9a-f]{8}$/);
    // ...and warns that the platform does not know it, so the actions will dead-letter.
    expect(result.stderr).toContain(`warning: conversation ${event?.conversationId} was made up`);
    expect(result.stderr).toContain('Pass --conversation');
  });

  it.each([
    [
      'a wrong secret',
      () => ['--secret', 'not-the-secret'],
      1,
      'HTTP 401',
      'convo-bridge: the receiver did not answer {"success":true} (the secret does not match: use the value of receiver.secrets / WEBHOOK_SECRET)\n',
    ],
    [
      'a wrong path',
      () => ['--url', url.replace('/webhooks/platform', '/hooks'), '--secret', SECRET],
      1,
      'HTTP 404',
      'convo-bridge: the receiver did not answer {"success":true} (wrong path: this receiver takes webhooks at /webhooks/platform (its receiver.path))\n',
    ],
  ])('%s: exit 1 with the status, the body and a hint', async (_name, extra, code, status, stderr) => {
    const args = extra();
    const withUrl = args.includes('--url') ? args : ['--url', url, ...args];
    const result = await cli(['send-test-webhook', ...withUrl, '--event', 'complaint']);
    expect(result.code).toBe(code);
    expect(result.stdout).toContain(status);
    expect(result.stdout).toContain('"success":false');
    expect(result.stderr).toBe(stderr);
    expect(await storedEvents()).toEqual([]);
  });

  it('a wrong path on a bridge of several businesses: the hint says where their paths come from and how to list them', async () => {
    const several = createReceiver({
      businesses: [
        { id: 'toko-a', path: '/webhooks/toko-a', secrets: [SECRET] },
        { id: 'toko-b', path: '/webhooks/toko-b', secrets: [`${SECRET}-b`] },
      ],
      redisUrl: testRedisUrl(),
      prefix,
    });
    try {
      const base = (await several.listen(0, '127.0.0.1')).url;
      const result = await cli(['send-test-webhook', '--url', `${base}/webhooks/nobody`, '--secret', SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('HTTP 404');
      expect(result.stderr).toBe(
        'convo-bridge: the receiver did not answer {"success":true} (wrong path: this bridge serves several businesses, each at its own receiver.path (/webhooks/<id> unless its entry sets one); `convo-bridge validate --config FILE` lists them (`webhook PATH` under each business))\n',
      );
    } finally {
      await several.close();
    }
  });

  it('exit 2 when nothing listens at the URL', async () => {
    const port = await findFreePort();
    const result = await cli([
      'send-test-webhook',
      '--url',
      `http://127.0.0.1:${port}/webhooks/platform`,
      '--secret',
      SECRET,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `convo-bridge: the receiver at http://127.0.0.1:${port} cannot be reached (ECONNREFUSED): is the bridge running (convo-bridge start) and is the URL right?\n`,
    );
  });

  it.each([
    [
      ['--url', 'not a url'],
      'convo-bridge: --url must be the receiver\'s webhook URL, e.g. http://127.0.0.1:8080/webhooks/platform, not "not a url"\n',
    ],
    [['--url', 'ftp://127.0.0.1/x'], 'convo-bridge: --url must start with http:// or https://, not ftp://\n'],
    [['--secret', '  '], 'convo-bridge: --secret must not be empty\n'],
    [['--timeout', '0'], 'convo-bridge: --timeout must be milliseconds from 1 to 120000, not "0"\n'],
  ])('bad input %j: exit 1, nothing sent', async (override, stderr) => {
    const args = { '--url': url, '--secret': SECRET } as Record<string, string>;
    const extra: string[] = [];
    for (let i = 0; i < override.length; i += 2) {
      const key = override[i] ?? '';
      const value = override[i + 1] ?? '';
      if (key in args) args[key] = value;
      else extra.push(key, value);
    }
    const result = await cli(['send-test-webhook', ...Object.entries(args).flat(), ...extra]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(stderr);
    expect(await storedEvents()).toEqual([]);
  });

  it.each([
    [
      ['--event', 'refund'],
      "error: option '--event <event>' argument 'refund' is invalid. Allowed choices are complaint, catalog, after-hours, ai-unsure, test.",
    ],
    [
      ['--form', 'newest'],
      "error: option '--form <form>' argument 'newest' is invalid. Allowed choices are current, earlier.",
    ],
  ])('unknown choice %j: exit 1 with the choices', async (extra, message) => {
    const result = await cli(['send-test-webhook', '--url', url, '--secret', SECRET, ...extra]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
  });

  it('--help shows examples', async () => {
    const result = await cli(['send-test-webhook', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Examples:');
    expect(result.stdout).toContain('--event complaint --conversation conv-42');
  });
});
