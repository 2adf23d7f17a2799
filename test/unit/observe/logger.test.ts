import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, maskForLog, maskPhones } from '../../../src/observe/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  return { lines, logger: createLogger({ destination, pretty: false, level: 'debug' }) };
}

describe('logger', () => {
  it.each([
    ['+62 812-3456-7890', '+628***90'],
    ['0812 3456 7890', '081***90'],
    ['hubungi +6281234567890 ya', 'hubungi +628***90 ya'],
  ])('masks phone number %j', (input, expected) => {
    expect(maskPhones(input)).toBe(expected);
  });

  it.each(['order 12345', 'channel.message_in|98765', '2026-11-21 07:00:00', 'ev-0a1b2c3d'])(
    'leaves %j alone',
    (input) => {
      expect(maskPhones(input)).toBe(input);
    },
  );

  it('redacts secrets by path and masks phones in fields and messages', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        headers: { authorization: 'Bearer s3cret' },
        secret: 's3cret',
        event: { text: 'call me at +62 812 3456 7890' },
      },
      'customer +6281234567890 wrote',
    );
    const line = lines.join('');
    expect(line).not.toContain('s3cret');
    expect(line).not.toContain('3456');
    expect(line).toContain('[redacted]');
    expect(JSON.parse(line).msg).toBe('customer +628***90 wrote');
  });

  it.each([
    ['write to siti.rahma+order@mail.example.co.id', 'write to ####.#####+#####@####.#######.##.##'],
    ['card 4111 1111 1111 1111 ok', 'card #### #### #### #### ok'],
    ['NIK 3201014508900001', 'NIK ################'],
    ['HP +62 812-3456-7890 / siti@x.id', 'HP +628***90 / ####@#.##'],
    ['conversation c-1, event channel.message_in|98765', 'conversation c-1, event channel.message_in|98765'],
  ])('maskForLog(%j) (issue 27)', (input, expected) => {
    expect(maskForLog(input)).toBe(expected);
  });

  it('an error is logged by type, code, message, stack and causes only, masked (issue 27)', () => {
    const { lines, logger } = capture();
    // ioredis puts the failed command and its arguments on a reply error; got its request options.
    const redisError = Object.assign(new Error('OOM command not allowed'), {
      command: { name: 'evalsha', args: ['{"text":"Halo Siti"}'] },
    });
    const error = Object.assign(new Error('store failed for siti@mail.co.id', { cause: redisError }), {
      code: 'STORE',
      options: { json: { text: 'Halo Siti' } },
    });
    logger.error({ err: error, conversationId: 'c-1' }, 'webhook failed');
    logger.error(error);
    const [first, second] = lines.map((line) => JSON.parse(line));
    expect(lines.join('')).not.toContain('Halo Siti');
    expect(lines.join('')).not.toContain('siti@mail');
    expect(first.err).toMatchObject({
      type: 'Error',
      code: 'STORE',
      message: 'store failed for ####@####.##.##',
      cause: { type: 'Error', message: 'OOM command not allowed' },
    });
    expect(Object.keys(first.err).sort()).toEqual(['cause', 'code', 'message', 'stack', 'type']);
    expect(first.conversationId).toBe('c-1');
    expect(second.msg).toBe('store failed for ####@####.##.##');
    expect(second.err.message).toBe('store failed for ####@####.##.##');
  });
});
