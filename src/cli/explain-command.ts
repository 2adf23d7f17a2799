import type { Command } from 'commander';
import type { z } from 'zod';
import { NotTextError, readTextFile } from '../base/decode-text.js';
import { parseInstant } from '../base/parse-instant.js';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { resolveConfigPath } from '../config/resolve-config-path.js';
import type { ConversationEvent } from '../events/conversation-event.js';
import { type ResolvedEventInput, resolveEventInput } from '../record/event-input.js';
import { FactsJsonSchema, factsFromJson } from '../record/recorded-event.js';
import { localTime } from '../rules/business-hours.js';
import { evaluateRules } from '../rules/evaluate-rules.js';
import { formatBurstRuns } from '../rules/format-bursts.js';
import { formatPlan } from '../rules/format-plan.js';
import type { ConversationFacts } from '../rules/plan.js';
import { liveTags, sortedNames, tagsAfter } from '../rules/tags.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { burstMessages, explainBursts } from './explain-bursts.js';
import type { CliIo } from './io.js';
import { pickBusiness } from './pick-business.js';

const EXAMPLES = `
Examples:
  $ convo-bridge explain --config config/bridge.yaml --event complaint.json
  $ convo-bridge explain --event test/fixtures/webhooks/channel-message-in.json   # a raw webhook body
  $ convo-bridge explain --event catalog.json --now 2026-11-23T03:15:00Z --json
  $ convo-bridge explain --event late.json --facts facts.json
  $ convo-bridge explain --config agency.yaml --business toko-a --event complaint.json
  $ convo-bridge explain --event halo.json --event tanya.json --event pesanan.json   # one burst

The event file is a canonical ConversationEvent (JSON). The facts file describes the
conversation before the event: {"lastCustomerMessageAt": ISO or null,
"isFirstCustomerMessage": bool, "onceMarks": {"rule#0": ISO}, "cooldowns": {"rule": ISO},
"tags": ["vip"] or {"vip": ISO it expires, or null}}.
Without --facts: no earlier customer message, not the first one, nothing sent yet.
Debounced rules (debounce:) are shown under "bursts": each is evaluated once on the burst the
customer messages form. Give --event several times for a burst of several messages (one
conversation, grouped by when each was received; the plan above is then the last one's).
A recorded line (convo-bridge events export, one line saved as a file) brings its own facts
and instant; --facts and --now override them.
Unset \${VAR}s in the config are allowed here (nothing is called).`;

export function registerExplainCommand(program: Command, io: CliIo): void {
  program
    .command('explain')
    .description('show which rules match an event, why the others do not, and the actions that would run')
    .requiredOption(
      '-e, --event <file>',
      'event JSON file: a webhook body as the platform sends it, or a canonical ConversationEvent; repeat it for a burst of customer messages',
      (file: string, earlier: string[] | undefined) => [...(earlier ?? []), file],
    )
    .option('-c, --config <file>', 'config file (default: config/bridge.yaml, then $CONVO_BRIDGE_CONFIG)')
    .option(
      '--now <iso>',
      'evaluate as of this instant (default: now); business_hours is judged at the event time',
    )
    .option('--facts <file>', 'conversation facts JSON (see below)')
    .option('--json', 'print the plan as JSON')
    .option('--business <id>', 'with businesses: whose rules and settings (required when there are several)')
    .addHelpText('after', EXAMPLES)
    .action(
      async (options: {
        event: string[];
        config?: string;
        now?: string;
        facts?: string;
        json?: boolean;
        business?: string;
      }) => {
        const path = resolveConfigPath(options.config);
        if (path === undefined) {
          throw new CliError(
            'no config file: pass --config FILE, create config/bridge.yaml, or set CONVO_BRIDGE_CONFIG',
          );
        }
        const givenNow = options.now === undefined ? undefined : parseNow(options.now);
        let loaded: LoadedConfig;
        try {
          loaded = await loadConfig(path, { allowMissingEnv: true });
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          for (const issue of error.issues) io.stderr(`${formatConfigIssue(issue)}\n`);
          throw new CliError(`config ${path} is invalid: run convo-bridge validate for details`, {
            exitCode: EXIT.invalidInput,
            cause: error,
          });
        }
        const business = pickBusiness(loaded, options.business);
        const inputs = [];
        for (const path of options.event) inputs.push({ path, input: await readEventInput(path, givenNow) });
        const messages = burstMessages(inputs);
        const input = (inputs[inputs.length - 1] as (typeof inputs)[number]).input;
        const { event } = input;
        const now = givenNow ?? input.now ?? new Date();
        const facts =
          options.facts === undefined
            ? (inputs[0]?.input.facts ?? input.facts ?? defaultFacts())
            : await readFactsFile(options.facts);
        const plan = evaluateRules(business.rules, event, facts, now);
        const tags = explainTags(business.rules.usesTags, facts, plan.actions, now);
        const bursts = explainBursts(business.rules, messages, facts);
        if (options.json) {
          const shown = bursts.map(({ plan: p, ...run }) => ({
            ...run,
            outcomes: p.outcomes,
            actions: p.actions,
          }));
          const json = {
            now: now.toISOString(),
            event: event.key,
            ...plan,
            ...(tags ? { tags } : {}),
            ...(business.rules.bursts.length > 0 ? { bursts: shown } : {}),
          };
          io.stdout(`${JSON.stringify(json, null, 2)}\n`);
        } else {
          const text = formatPlan(plan, event, now, localTime(now, business.config.timezone).label, tags);
          const section = formatBurstRuns(bursts, business.config.timezone, messages.length);
          io.stdout(
            section.length === 0
              ? text
              : text.replace(/\n\(explain only plans/, `\n${section.join('\n')}\n(explain only plans`),
          );
        }
      },
    );
}

/** The tags before the event and after its plan, when the rules or the facts have any. */
function explainTags(
  usesTags: boolean,
  facts: ConversationFacts,
  actions: readonly { type: string }[],
  now: Date,
): { before: string[]; after: string[] } | undefined {
  const before = sortedNames(liveTags(facts.tags, now.getTime()));
  if (!usesTags && before.length === 0) return undefined;
  return { before, after: sortedNames(tagsAfter(facts.tags, actions, now)) };
}

function parseNow(text: string): Date {
  const parsed = parseInstant(text);
  if (!parsed.ok) {
    throw new CliError(`--now ${JSON.stringify(text)}: ${parsed.why}: write e.g. 2026-11-23T03:15:00Z`);
  }
  return parsed.date;
}

function defaultFacts(): ConversationFacts {
  return { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };
}

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readTextFile(path);
  } catch (error) {
    if (error instanceof NotTextError) {
      throw new CliError(`${error.message} (the ${what} file must be one JSON object)`, { cause: error });
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new CliError(`cannot read the ${what} file ${path} (${code}): check the path`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new CliError(`${path} is not valid JSON (${detail}): the ${what} file must be one JSON object`, {
      cause: error,
    });
  }
}

function describeIssues(path: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => `${path}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('\n');
}

/**
 * The event to explain: a webhook body exactly as the platform sends it, a canonical
 * ConversationEvent (`v: 1`), or a recorded line (`convo-bridge events export`, one line saved as a
 * file), whose facts and evaluation instant are used unless --facts / --now are given.
 */
export async function readEventInput(path: string, receivedAt = new Date()): Promise<ResolvedEventInput> {
  const value = await readJson(path, 'event');
  const result = resolveEventInput(value, path, receivedAt);
  if (!result.ok) throw new CliError(result.message);
  return result.value;
}

/** The event alone (see readEventInput). */
export async function readEventFile(path: string, receivedAt = new Date()): Promise<ConversationEvent> {
  return (await readEventInput(path, receivedAt)).event;
}

async function readFactsFile(path: string): Promise<ConversationFacts> {
  const value = await readJson(path, 'facts');
  const parsed = FactsJsonSchema.safeParse(value);
  if (!parsed.success) {
    throw new CliError(`${path} is not a facts file:\n${describeIssues(path, parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return factsFromJson(parsed.data);
}
