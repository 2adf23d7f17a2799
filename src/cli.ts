#!/usr/bin/env -S node --max-old-space-size=160 --max-semi-space-size=8 --heap-growing-percent=50
import { runCli } from './cli/run-cli.js';

const code = await runCli(process.argv.slice(2));
// Long-running commands (start, serve, work, emulator) keep the process alive themselves and set
// process.exitCode when they stop; only short commands end here.
if (code !== 0) process.exitCode = code;
