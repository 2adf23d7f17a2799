import { Command, CommanderError } from 'commander';
import { ConvoBridgeError, describeError } from '../base/errors.js';
import { packageVersion } from '../base/package-version.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { type CliIo, defaultIo } from './io.js';
import { registerCommands } from './register-commands.js';

export function buildProgram(io: CliIo = defaultIo): Command {
  const program = new Command('convo-bridge')
    .description('Integration worker for AI customer-service inboxes.')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .showHelpAfterError('(add --help for usage and examples)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();
  registerCommands(program, io);
  return program;
}

/** Runs the CLI and returns the exit code instead of exiting, so tests can call it in-process. */
export async function runCli(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.invalidInput;
    }
    if (error instanceof CliError) {
      io.stderr(`convo-bridge: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof ConvoBridgeError) {
      io.stderr(`convo-bridge: ${error.message}\n`);
      return EXIT.unavailable;
    }
    io.stderr(`convo-bridge: unexpected error: ${describeError(error)}\n`);
    if (error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return EXIT.internal;
  }
}
