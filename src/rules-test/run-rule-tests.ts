import { dirname, isAbsolute, join } from 'node:path';
import { NotTextError, readTextFile } from '../base/decode-text.js';
import type { LoadedBusiness } from '../config/businesses.js';
import { documentToJs, locatePath, parseConfigDocument } from '../config/config-document.js';
import { ConfigError, formatConfigIssue } from '../config/config-error.js';
import { type LoadedConfig, loadConfig } from '../config/load-config.js';
import { selectBusiness } from '../config/select-business.js';
import { resolveEventInput } from '../record/event-input.js';
import { factsFromJson } from '../record/recorded-event.js';
import { evaluateRules } from '../rules/evaluate-rules.js';
import type { ConversationFacts } from '../rules/plan.js';
import { sortedNames, tagsAfter } from '../rules/tags.js';
import { checkBursts, planBurstCase } from './burst-case.js';
import { checkNames } from './check-names.js';
import { type CheckFailure, checkPlan } from './check-plan.js';
import { describeTestFileIssues } from './describe-test-file-issues.js';
import { type RuleTestCase, RuleTestFileSchema } from './rules-test-schema.js';

/** The outcome of one case. */
export interface CaseResult {
  name: string;
  /** `file:line` of the case. */
  where: string;
  /** Empty when it passed. */
  failures: CheckFailure[];
  /** Set when the case could not be run at all (unreadable event file, bad event). */
  error?: string;
}

export interface FileResult {
  file: string;
  /** The config the cases ran against. */
  config: string;
  /** The business whose rules ran, when the config has businesses. */
  business?: string;
  cases: CaseResult[];
  /** Set when the file could not be read or is not a valid test file (every problem, with lines). */
  error?: string;
}

/** Raised for a test file that cannot be run; `message` lists each problem as `file:line:col`. */
export class RuleTestFileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RuleTestFileError';
  }
}

export interface RunOptions {
  /** Overrides the file's `config:`. */
  configPath?: string | undefined;
  /** Overrides the file's `business:`. */
  business?: string | undefined;
}

/**
 * Runs one `*.rules-test.yaml` file: reads it (strict YAML, schema-checked with positions), loads
 * its config once (unset `${VAR}`s allowed: nothing is called), evaluates each case with the same
 * evaluator the worker uses, and checks the plan against `expect`.
 */
export async function runRuleTestFile(
  file: string,
  options: RunOptions = {},
  configs: Map<string, Promise<LoadedConfig>> = new Map(),
): Promise<FileResult> {
  let parsed: Awaited<ReturnType<typeof readTestFile>>;
  try {
    parsed = await readTestFile(file);
  } catch (error) {
    if (!(error instanceof RuleTestFileError)) throw error;
    return { file, config: options.configPath ?? '', cases: [], error: error.message };
  }
  const { data, document } = parsed;
  const configPath =
    options.configPath ?? (data.config !== undefined ? relativeTo(file, data.config) : undefined);
  if (configPath === undefined) {
    const message = `${file}:1:1: no config to test: add "config: bridge.yaml" (relative to this file) or pass --config FILE`;
    return { file, config: '', cases: [], error: message };
  }
  let loaded: LoadedConfig;
  try {
    let pending = configs.get(configPath);
    if (!pending) {
      pending = loadConfig(configPath, { allowMissingEnv: true });
      configs.set(configPath, pending);
    }
    loaded = await pending;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const lines = error.issues.map(formatConfigIssue).join('\n');
    return {
      file,
      config: configPath,
      cases: [],
      error: `the config ${configPath} is invalid (run convo-bridge validate):\n${lines}`,
    };
  }
  const selected = selectBusiness(
    loaded,
    options.business ?? data.business,
    '--business',
    'business: in the test file',
  );
  if (!selected.ok) return { file, config: configPath, cases: [], error: selected.message };
  const business = selected.business;
  const known = {
    rules: business.rules.rules.map((rule) => rule.name),
    destinations: Object.keys(business.config.destinations),
  };
  const cases: CaseResult[] = [];
  for (const [index, testCase] of data.cases.entries()) {
    const { line } = locatePath(document, ['cases', index]);
    const where = `${file}:${line}`;
    try {
      const { plan, runs, facts, now } = await evaluateCase(testCase, data.now, file, index, business);
      const tags = sortedNames(tagsAfter(facts.tags, plan.actions, now));
      const failures = [
        ...checkNames(testCase.expect, known),
        ...checkPlan(testCase.expect, plan, tags),
        ...checkBursts(testCase.expect, runs),
      ];
      cases.push({ name: testCase.name, where, failures });
    } catch (error) {
      if (!(error instanceof RuleTestFileError)) throw error;
      cases.push({ name: testCase.name, where, failures: [], error: error.message });
    }
  }
  return {
    file,
    config: configPath,
    ...(loaded.written === 'businesses' ? { business: business.id } : {}),
    cases,
  };
}

async function evaluateCase(
  testCase: RuleTestCase,
  fileNow: string | undefined,
  file: string,
  index: number,
  business: LoadedBusiness,
) {
  const givenNow = testCase.now ?? fileNow;
  const receivedAt = givenNow !== undefined ? new Date(givenNow) : new Date();
  let value: unknown = testCase.event;
  let where = `${file}: cases[${index}].event`;
  if (testCase.event_file !== undefined) {
    const path = relativeTo(file, testCase.event_file);
    where = path;
    let text: string;
    try {
      text = await readTextFile(path);
    } catch (error) {
      if (error instanceof NotTextError) {
        throw new RuleTestFileError(`event_file ${error.message}`, { cause: error });
      }
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      throw new RuleTestFileError(
        `cannot read event_file ${testCase.event_file} (${code}): it is resolved from ${dirname(file)}`,
        { cause: error },
      );
    }
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new RuleTestFileError(`event_file ${path} is not valid JSON (${(error as Error).message})`, {
        cause: error,
      });
    }
  }
  const input = resolveEventInput(value, where, receivedAt);
  if (!input.ok) throw new RuleTestFileError(input.message);
  const { event } = input.value;
  const now = givenNow !== undefined ? new Date(givenNow) : (input.value.now ?? new Date(event.occurredAt));
  const facts: ConversationFacts =
    testCase.facts !== undefined
      ? factsFromJson(testCase.facts)
      : (input.value.facts ?? { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} });
  const burst = planBurstCase(testCase, event, business.rules, facts);
  if (typeof burst === 'string') throw new RuleTestFileError(burst);
  if (burst !== null) return { ...burst, event, now, facts };
  return { plan: evaluateRules(business.rules, event, facts, now), runs: undefined, event, now, facts };
}

async function readTestFile(file: string) {
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (error) {
    if (error instanceof NotTextError) {
      throw new RuleTestFileError(error.message, { cause: error });
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new RuleTestFileError(`cannot read the test file ${file} (${code}): check the path`, {
      cause: error,
    });
  }
  const { document, issues } = parseConfigDocument(text, file, TEST_FILE_WORDS);
  if (!document || issues.length > 0) {
    throw new RuleTestFileError(issues.map(formatConfigIssue).join('\n') || `${file}: not a YAML mapping`);
  }
  const js = documentToJs(document);
  if ('issue' in js) throw new RuleTestFileError(formatConfigIssue(js.issue));
  const result = RuleTestFileSchema.safeParse(js.value);
  if (!result.success) {
    const lines = describeTestFileIssues(result.error.issues, document, file);
    throw new RuleTestFileError(
      `${lines.join('\n')}\n(the fields of a test file are in config/rules-test.schema.json)`,
    );
  }
  return { data: result.data, document };
}

/** What an empty test file, and one that is not a mapping, are told (not the config's words). */
const TEST_FILE_WORDS = {
  empty: 'the test file is empty: give config: and cases: (see config/bridge.example.rules-test.yaml)',
  notMapping: 'a test file is a mapping (config:, now:, cases:)',
};

/** A path written in a test file, resolved from the file's directory. */
function relativeTo(file: string, path: string): string {
  return isAbsolute(path) ? path : join(dirname(file), path);
}
