import type { Command } from 'commander';
import { registerBacktestCommand } from './backtest-command.js';
import { addWritesHelp } from './command-writes.js';
import { registerConsoleCommand } from './console-command.js';
import { registerDemoCommand } from './demo-command.js';
import { registerDlqCommand } from './dlq-command.js';
import { registerEmulatorCommand } from './emulator-command.js';
import { registerEventsCommand } from './events-command.js';
import { registerExplainCommand } from './explain-command.js';
import { registerForgetCommand } from './forget-command.js';
import type { CliIo } from './io.js';
import { registerQuarantineCommand } from './quarantine-command.js';
import { registerReshardCommand } from './reshard-command.js';
import { registerRunCommands } from './run-commands.js';
import { registerSchemaCommand } from './schema-command.js';
import { registerSendTestWebhookCommand } from './send-test-webhook-command.js';
import { registerShadowCommand } from './shadow-command.js';
import { registerTestCommand } from './test-command.js';
import { registerTimersCommand } from './timers-command.js';
import { registerValidateCommand } from './validate-command.js';

/**
 * Every subcommand registers itself here, one file per command under src/cli/.
 * Keep this list in the order `--help` shows it.
 */
export function registerCommands(program: Command, io: CliIo): void {
  registerRunCommands(program, io);
  registerValidateCommand(program, io);
  registerExplainCommand(program, io);
  registerTestCommand(program, io);
  registerBacktestCommand(program, io);
  registerSchemaCommand(program, io);
  registerConsoleCommand(program, io);
  registerDlqCommand(program, io);
  registerQuarantineCommand(program, io);
  registerEventsCommand(program, io);
  registerShadowCommand(program, io);
  registerTimersCommand(program, io);
  registerForgetCommand(program, io);
  registerReshardCommand(program, io);
  registerEmulatorCommand(program, io);
  registerDemoCommand(program, io);
  registerSendTestWebhookCommand(program, io);
  addWritesHelp(program);
}
