import type { Command } from 'commander';
import { configJsonSchema } from '../config/config-json-schema.js';
import { rulesTestJsonSchema } from '../rules-test/rules-test-schema.js';
import type { CliIo } from './io.js';

const EXAMPLES = `
Examples:
  $ convo-bridge schema > config/schema.json
  Then start a config file with: # yaml-language-server: $schema=./schema.json
  $ convo-bridge schema --tests > config/rules-test.schema.json   # for *.rules-test.yaml files`;

export function registerSchemaCommand(program: Command, io: CliIo): void {
  program
    .command('schema')
    .description('print the JSON Schema (draft-07) of the config file, for editors')
    .option('--tests', 'the schema of rule test files (*.rules-test.yaml) instead')
    .addHelpText('after', EXAMPLES)
    .action((options: { tests?: boolean }) => {
      const schema = options.tests ? rulesTestJsonSchema() : configJsonSchema();
      io.stdout(`${JSON.stringify(schema, null, 2)}\n`);
    });
}
