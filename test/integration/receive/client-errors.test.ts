import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../../src/receive/create-receiver.js';
import type { ListeningReceiver } from '../../../src/receive/http/receiver-servers.js';
import { type RawAnswer, sendRaw } from '../../hostile/support/raw-http.js';
import { connectTestRedis, deleteKeys, testRedisUrl, uniqueName } from '../../support/redis.js';

const SECRET = 'whsec-client-errors-41d2';
const HEAD = `POST /webhooks/platform HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${SECRET}\r\nContent-Type: application/json\r\n`;
const TEST_PING = '{"event":"test"}';

const invalid = (reason: string) => ({
  success: false,
  error: `the request is not valid HTTP/1.1 (${reason}); it was not read`,
});

/**
 * Requests Node's HTTP parser refuses before Express sees them. Found by test/hostile: Node
 * answered them with an empty `400 Bad Request` (431, 417), the only non-JSON answers of the
 * receiver, and a request without Host was refused although the receiver does not use it.
 */
describe('receiver: requests the HTTP parser refuses are answered in JSON', () => {
  let redis: Redis;
  let prefix: string;
  let receiver: Receiver;
  let listening: ListeningReceiver;

  beforeAll(async () => {
    redis = connectTestRedis();
    prefix = uniqueName('t-client-errors');
    receiver = createReceiver({ secrets: [SECRET], redisUrl: testRedisUrl(), prefix });
    listening = await receiver.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await receiver.close();
    await deleteKeys(redis, `${prefix}:`);
    await redis.quit();
  });

  const send = async (raw: string, halfClose = false): Promise<RawAnswer> => {
    const result = await sendRaw(listening.port, Buffer.from(raw, 'latin1'), { halfClose, timeoutMs: 5_000 });
    if (result.kind === 'no-answer') throw new Error(`no answer: ${result.reason}`);
    return result.answer;
  };
  const json = (answer: RawAnswer) => JSON.parse(answer.body.toString('utf8')) as unknown;

  it.each([
    [
      'Content-Length twice',
      `${HEAD}Content-Length: 16\r\nContent-Length: 16\r\n\r\n${TEST_PING}`,
      400,
      invalid('Content-Length is given twice, or beside Transfer-Encoding'),
    ],
    [
      'two different Content-Lengths',
      `${HEAD}Content-Length: 16\r\nContent-Length: 17\r\n\r\n${TEST_PING}`,
      400,
      invalid('Content-Length is given twice, or beside Transfer-Encoding'),
    ],
    [
      'Content-Length not a number',
      `${HEAD}Content-Length: 16abc\r\n\r\n${TEST_PING}`,
      400,
      invalid('Content-Length is not a number'),
    ],
    [
      'Content-Length and chunked',
      `${HEAD}Content-Length: 16\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n${TEST_PING}\r\n0\r\n\r\n`,
      400,
      invalid('Transfer-Encoding is not valid'),
    ],
    [
      'a bad chunk size',
      `${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n${TEST_PING}\r\n0\r\n\r\n`,
      400,
      invalid('a chunk size is not valid'),
    ],
    [
      'a control byte in a header',
      `${HEAD}X-Bad: a\u0001b\r\nContent-Length: 16\r\n\r\n${TEST_PING}`,
      400,
      invalid('a header holds a character HTTP does not allow'),
    ],
    [
      'a lower-case method',
      `post /webhooks/platform HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`,
      400,
      invalid('the method is not one HTTP knows'),
    ],
    [
      'bare LF line ends',
      `POST /webhooks/platform HTTP/1.1\nHost: x\nContent-Length: 0\n\n`,
      400,
      invalid('the HTTP version is not valid'),
    ],
    [
      'headers over 16 KB',
      `${HEAD}X-Big: ${'b'.repeat(20_000)}\r\nContent-Length: 16\r\n\r\n${TEST_PING}`,
      431,
      {
        success: false,
        error: 'the request headers are larger than 16 KB; send the webhook with ordinary headers',
      },
    ],
    [
      'an Expect the receiver does not meet',
      `${HEAD}Expect: coffee\r\nContent-Length: 16\r\n\r\n${TEST_PING}`,
      417,
      {
        success: false,
        error: 'the Expect header asks for something this receiver does not do; send the webhook without it',
      },
    ],
  ])('%s: %i', async (_name, raw, status, body) => {
    const answer = await send(raw);
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toEqual(['application/json; charset=utf-8']);
    expect(answer.headers.get('x-convo-bridge-outcome')).toEqual(['bad_request']);
    expect(json(answer)).toEqual(body);
  });

  it('a body shorter than its Content-Length, then the end of the connection: 400 in JSON', async () => {
    const answer = await send(`${HEAD}Content-Length: 100\r\n\r\n${TEST_PING}`, true);
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual(invalid('the connection ended before the body was complete'));
  });

  it('a request without Host is received like any other (the receiver does not use Host)', async () => {
    const answer = await send(
      `POST /webhooks/platform HTTP/1.1\r\nAuthorization: ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: 16\r\nConnection: close\r\n\r\n${TEST_PING}`,
    );
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ success: true });
  });

  it('Expect: 100-continue still works', async () => {
    const answer = await send(
      `${HEAD}Expect: 100-continue\r\nContent-Length: 16\r\nConnection: close\r\n\r\n${TEST_PING}`,
    );
    expect(answer.informational).toEqual([100]);
    expect(answer.status).toBe(200);
  });
});
