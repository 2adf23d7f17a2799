import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { resolveConfigPath } from '../config/resolve-config-path.js';
import { formatTestResults } from '../rules-test/format-test-results.js';
import { type FileResult, runRuleTestFile } from '../rules-test/run-rule-tests.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

const EXAMPLES = `
Examples:
  $ convo-bridge test config/bridge.example.rules-test.yaml
  $ convo-bridge test --config config/bridge.yaml            # every *.rules-test.yaml beside it
  $ convo-bridge test --config staging.yaml tests/*.rules-test.yaml
  $ convo-bridge test --config agency.yaml --business toko-a toko-a.rules-test.yaml

A test file lists cases: an event (webhook body, canonical event or recorded line; inline or
event_file), optional facts and now, and what the plan must be (matched rules, actions in order,
no_action, blocked replies). Its fields: config/rules-test.schema.json. Nothing is called.
With a config of several businesses, --business (or the file's business:) says whose rules.
Exit code 1 when a case fails.`;

export const TEST_FILE_SUFFIX = '.rules-test.yaml';

export function registerTestCommand(program: Command, io: CliIo): void {
  program
    .command('test')
    .description('run rule tests (*.rules-test.yaml): evaluate each case and compare the plan')
    .argument('[files...]', `test files (default: the *${TEST_FILE_SUFFIX} files beside the config)`)
    .option('-c, --config <file>', "config whose rules to test (overrides each file's config:)")
    .option('--business <id>', "with businesses: whose rules to test (overrides each file's business:)")
    .addHelpText('after', EXAMPLES)
    .action(async (files: string[], options: { config?: string; business?: string }) => {
      let list = files;
      let configPath = options.config;
      if (configPath !== undefined) await mustExist(configPath, '--config');
      if (list.length === 0) {
        const config = resolveConfigPath(options.config);
        if (config === undefined) {
          throw new CliError(
            `no test files given and no config to look beside: pass FILES, or --config FILE (its directory is searched for *${TEST_FILE_SUFFIX})`,
          );
        }
        if (options.config === undefined) await mustExist(config, 'the config');
        list = await testFilesBeside(config);
        if (list.length === 0) {
          throw new CliError(
            `no *${TEST_FILE_SUFFIX} files beside ${config}: write one (see docs/rules.md, "Testing rules")`,
          );
        }
        configPath = config;
      }
      const results: FileResult[] = [];
      const configs = new Map();
      const run = { configPath, business: options.business };
      for (const file of list) results.push(await runRuleTestFile(file, run, configs));
      const { text, failed } = formatTestResults(results);
      io.stdout(text);
      if (failed > 0) {
        throw new CliError(`${failed} rule test(s) failed`, { exitCode: EXIT.invalidInput });
      }
    });
}

/** A config to look beside that is missing is "not found", not "no test files beside it". */
async function mustExist(config: string, what: string): Promise<void> {
  const found = await stat(config).catch((error: NodeJS.ErrnoException) => error);
  if (found instanceof Error) {
    const why = found.code === 'ENOENT' ? 'not found' : `cannot be read (${found.code ?? found.message})`;
    throw new CliError(`${what} ${config}: ${why}: check the path`, { cause: found });
  }
  if (!found.isFile()) throw new CliError(`${what} ${config}: not a file`);
}

/** `<stem>.rules-test.yaml` and `<stem>.*.rules-test.yaml` beside `<stem>.yaml`. */
async function testFilesBeside(config: string): Promise<string[]> {
  const dir = dirname(config);
  const stem = basename(config).replace(/\.ya?ml$/, '');
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter(
      (name) =>
        name === `${stem}${TEST_FILE_SUFFIX}` ||
        (name.startsWith(`${stem}.`) && name.endsWith(TEST_FILE_SUFFIX)),
    )
    .sort()
    .map((name) => join(dir, name));
}
