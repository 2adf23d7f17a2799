import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, maskPhones } from '../../../src/observe/logger.js';

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
});
