import type { Command } from 'commander';
import { registerEmulatorCommand } from './emulator-command.js';
import type { CliIo } from './run-cli.js';

/**
 * Every subcommand registers itself here, one file per command under src/cli/.
 * Keep this list in the order `--help` shows it.
 */
export function registerCommands(_program: Command, _io: CliIo): void {
  registerEmulatorCommand(_program, _io);
}
