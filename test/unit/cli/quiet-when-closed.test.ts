import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { quietWhenClosed } from '../../../src/cli/io.js';

/** The writer behind the CLI's stdout and stderr (issue 30: `| head` ended in an EPIPE stack trace). */

function stream(fail: NodeJS.ErrnoException | undefined) {
  const written: string[] = [];
  const target = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done(written.length === 2 ? fail : undefined);
    },
  });
  return { target, written };
}

const closed = () => new Promise((resolve) => setImmediate(resolve));

describe('quietWhenClosed', () => {
  it('after EPIPE, writes nothing more and reports nothing', async () => {
    const { target, written } = stream(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    const others: unknown[] = [];
    const write = quietWhenClosed(target, (error) => others.push(error));
    write('one\n');
    write('two\n');
    await closed();
    write('three\n');
    expect(written).toEqual(['one\n', 'two\n']);
    expect(others).toEqual([]);
  });

  it('any other write error stops the writes and is reported once', async () => {
    const { target, written } = stream(Object.assign(new Error('no space left'), { code: 'ENOSPC' }));
    const others: NodeJS.ErrnoException[] = [];
    const write = quietWhenClosed(target, (error) => others.push(error));
    write('one\n');
    write('two\n');
    await closed();
    write('three\n');
    expect(written).toEqual(['one\n', 'two\n']);
    expect(others.map((e) => e.code)).toEqual(['ENOSPC']);
  });
});
