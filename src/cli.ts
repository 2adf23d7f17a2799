#!/usr/bin/env -S node --max-old-space-size=160 --max-semi-space-size=8 --heap-growing-percent=50
import { flushed } from './cli/io.js';
import { runCli } from './cli/run-cli.js';

const code = await runCli(process.argv.slice(2));
// Long-running commands (start, serve, work, emulator) keep the process alive themselves and set
// process.exitCode when they stop; only short commands end here. A command that failed has printed
// its error: end once the output is out rather than when the last handle lets go (a Redis client
// still trying to reconnect kept `dlq list` alive 2 s after "cannot reach Redis").
if (code !== 0) {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
