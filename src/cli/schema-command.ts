import type { Command } from 'commander';
import { configJsonSchema } from '../config/config-json-schema.js';
import type { CliIo } from './run-cli.js';

const EXAMPLES = `
Examples:
  $ convo-bridge schema > config/schema.json
  Then start a config file with: # yaml-language-server: $schema=./schema.json`;

export function registerSchemaCommand(program: Command, io: CliIo): void {
  program
    .command('schema')
    .description('print the JSON Schema (draft-07) of the config file, for editors')
    .addHelpText('after', EXAMPLES)
    .action(() => {
      io.stdout(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });
}
