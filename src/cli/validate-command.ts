import type { Command } from 'commander';
import { redactUrl } from '../base/redact-url.js';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import type { BridgeConfig } from '../config/config-schema.js';
import { describeConfigDefaults } from '../config/describe-defaults.js';
import { describeRetention } from '../config/describe-retention.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { resolveConfigPath } from '../config/resolve-config-path.js';
import { describeTracing, resolveTracing } from '../observe/tracing-settings.js';
import { CliError } from './cli-error.js';
import { describeRedisConfig } from './describe-redis.js';
import { EXIT } from './exit-codes.js';
import { describeHeldForConfig } from './held-check.js';
import type { CliIo } from './io.js';
import { describeRule, summarizeBusinesses } from './summarize-businesses.js';

const EXAMPLES = `
Examples:
  $ convo-bridge validate config/bridge.yaml
  $ convo-bridge validate --config config/bridge.example.yaml --allow-missing-env
  $ CONVO_BRIDGE_CONFIG=/etc/convo-bridge.yaml convo-bridge validate

Exit codes: 0 valid, 1 invalid (every problem printed as file:line:column: message).
Unset \${VAR}s without a default are errors, as at startup; --allow-missing-env checks
everything else with placeholders and lists the variables still to set.`;

export function registerValidateCommand(program: Command, io: CliIo): void {
  program
    .command('validate')
    .description('check a config file and its rules without starting anything')
    .argument('[file]', 'config file (same as --config)')
    .option('-c, --config <file>', 'config file (default: config/bridge.yaml, then $CONVO_BRIDGE_CONFIG)')
    .option('--allow-missing-env', 'accept unset ${VAR}s (placeholders) and list them as warnings')
    .option(
      '--no-redis',
      "do not look in the config's Redis for jobs it would hold (businesses it does not have)",
    )
    .addHelpText('after', EXAMPLES)
    .action(
      async (
        file: string | undefined,
        options: { config?: string; allowMissingEnv?: boolean; redis?: boolean },
      ) => {
        const path = resolveConfigPath(options.config ?? file);
        if (path === undefined) {
          throw new CliError(
            'no config file: pass --config FILE, create config/bridge.yaml, or set CONVO_BRIDGE_CONFIG',
          );
        }
        let loaded: LoadedConfig;
        try {
          loaded = await loadConfig(path, { allowMissingEnv: options.allowMissingEnv ?? false });
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          for (const issue of error.issues) io.stderr(`${formatConfigIssue(issue)}\n`);
          if (
            !options.allowMissingEnv &&
            error.issues.some((i) => i.message.startsWith('environment variable '))
          ) {
            io.stderr(
              'hint: set the variables, or add --allow-missing-env to check the rest with placeholders\n',
            );
          }
          const count = error.issues.length === 1 ? '1 problem' : `${error.issues.length} problems`;
          throw new CliError(`config ${path} is invalid: ${count}`, {
            exitCode: EXIT.invalidInput,
            cause: error,
          });
        }
        io.stdout(summarize(loaded));
        for (const warning of loaded.warnings) io.stderr(`warning: ${formatConfigIssue(warning)}\n`);
        // What a bridge of this config would hold: events and timers of businesses it does not have.
        if (options.redis !== false) {
          for (const line of await describeHeldForConfig(path, loaded, process.env)) io.stderr(`${line}\n`);
        }
        for (const missing of loaded.missingEnv) {
          io.stderr(
            `warning: ${missing.file ?? path}:${missing.line}:${missing.column}: \${${missing.name}} is not set (checked with a placeholder); set it before starting\n`,
          );
        }
      },
    );
}

/**
 * "config OK: N rules" and a short summary of what the file sets up; no secrets. A config with
 * businesses: "config OK: N businesses" and two lines for each (summarize-businesses.ts).
 */
export function summarize(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): string {
  if (loaded.written === 'businesses') return summarizeBusinesses(loaded, env);
  const c: BridgeConfig = loaded.config;
  const rules = c.rules;
  const lines = [`config OK: ${rules.length} rule${rules.length === 1 ? '' : 's'} (${loaded.file})`];
  lines.push(
    `  platform: ${c.platform.form} form, ${redactUrl(c.platform.baseUrl)}, auth ${c.platform.auth.scheme}`,
  );
  lines.push(
    `  receiver: ${c.receiver.host}:${c.receiver.port}${c.receiver.path}, ${c.receiver.secrets.length} webhook secret${c.receiver.secrets.length === 1 ? '' : 's'}`,
  );
  for (const line of describeRedisConfig(c.redis)) lines.push(`  ${line}`);
  lines.push(`  ${describeRetention(c.retention)}`);
  if (c.businessHours) {
    const weekly =
      Object.entries(c.businessHours.weekly)
        .map(([days, ranges]) => `${days} ${typeof ranges === 'string' ? ranges : ranges.join(',')}`)
        .join(', ') || 'never open (weekly: {})';
    const holidays = c.businessHours.holidays.length;
    lines.push(
      `  business hours (${c.timezone}): ${weekly}; ${holidays} holiday${holidays === 1 ? '' : 's'}`,
    );
  }
  const mappings = `${c.channels.length} channel mapping${c.channels.length === 1 ? '' : 's'}`;
  lines.push(
    `  reply window: ${c.replyWindow.hours}h for ${c.replyWindow.appliesTo.join(', ') || 'no channel (applies_to: [])'}; ${mappings}`,
  );
  const destinations = Object.entries(c.destinations).map(([name, d]) => describeDestination(name, d.fields));
  if (destinations.length > 0) lines.push(`  destinations: ${destinations.join('; ')}`);
  // Said when on, or when the config asks for it and something turns it off.
  const tracing = resolveTracing(c.tracing, env);
  if (tracing.enabled || c.tracing.enabled === true || c.tracing.endpoint !== null) {
    lines.push(`  tracing: ${describeTracing(tracing)}`);
  }
  // Every default a wrong guess would hurt is said, with what it means.
  for (const line of describeConfigDefaults(c)) lines.push(`  default: ${line}`);
  for (const rule of rules) lines.push(describeRule(rule));
  return `${lines.join('\n')}\n`;
}

/** Fields of an event that hold what customers wrote or are called: personal data. */
const CUSTOMER_FIELDS: readonly string[] = [
  'text',
  'caption',
  'senderName',
  'conversationLabel',
  'attachments',
];

/** `crm (the whole event, texts included)`, or `audit (event fields kind, conversationId; no texts or names)`. */
export function describeDestination(name: string, fields: readonly string[] | null): string {
  if (fields === null) return `${name} (the whole event, texts and names included)`;
  const customer = fields.filter((field) => CUSTOMER_FIELDS.includes(field));
  return `${name} (event fields ${fields.join(', ')}; ${
    customer.length === 0 ? 'no texts or names' : `customer data: ${customer.join(', ')}`
  })`;
}
