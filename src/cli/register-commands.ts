import type { Command } from 'commander';
import { registerQuarantineCommand } from './quarantine-command.js';
import type { CliIo } from './run-cli.js';

/**
 * Every subcommand registers itself here, one file per command under src/cli/.
 * Keep this list in the order `--help` shows it.
 */
export function registerCommands(program: Command, io: CliIo): void {
  registerQuarantineCommand(program, io);
}
