import { EXIT } from './exit-codes.js';

/**
 * Where a command writes: every command takes a CliIo instead of writing to process.stdout, so
 * that tests can run the CLI in-process and read what it printed (run-cli.ts `runCli`).
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * A writer to one of the process's streams that goes quiet once the reader has gone. Node ignores
 * SIGPIPE, so `convo-bridge test | head -2` used to end in an unhandled `write EPIPE` stack trace
 * and exit 1. Here an EPIPE stops further writes to that stream, quietly; the command
 * runs on and ends with its own exit code (what `set -o pipefail` reports). Any other write error
 * (a full disk) also stops the writes, and `onOtherError` says so. The listener is added on the first write, so importing this module changes nothing.
 */
export function quietWhenClosed(
  stream: NodeJS.WritableStream,
  onOtherError: (error: NodeJS.ErrnoException) => void = () => {},
): (text: string) => void {
  let closed = false;
  let listening = false;
  return (text) => {
    if (closed) return;
    if (!listening) {
      listening = true;
      stream.on('error', (error: NodeJS.ErrnoException) => {
        closed = true;
        if (error.code !== 'EPIPE') onOtherError(error);
      });
    }
    stream.write(text);
  };
}

/** The process's own stdout and stderr (what `convo-bridge` uses when run as a program). */
export const defaultIo: CliIo = {
  stdout: quietWhenClosed(process.stdout, (error) => {
    process.stderr.write(
      `convo-bridge: cannot write the output (${error.code ?? error.message}): it stops here\n`,
    );
    process.exitCode = EXIT.unavailable;
  }),
  stderr: quietWhenClosed(process.stderr),
};

/**
 * Resolves when everything written to `stream` has been handed to the OS (or the stream has
 * failed or closed). A pipe takes 64 KiB at once; process.exit() with more still queued cut
 * `backtest --json | wc -c` short.
 */
export function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done).off('error', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('error', done).on('close', done);
  });
}
