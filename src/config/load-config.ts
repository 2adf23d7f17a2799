import { readFile } from 'node:fs/promises';

import { type CompiledRules, compileRules } from '../rules/compile-rules.js';
import {
  type ConfigPath,
  documentToJs,
  locatePath,
  NESTED_TOO_DEEPLY,
  parseConfigDocument,
} from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import { type BridgeConfig, configSchema } from './config-schema.js';
import { describeZodIssues, type SchemaProblem } from './describe-zod-issues.js';
import { findTemplateProblems } from './find-template-problems.js';
import { type Env, interpolateEnv, type MissingVariable, type SubstitutedValue } from './interpolate-env.js';

export interface LoadedConfig {
  /** The file it came from, as given. */
  file: string;
  config: BridgeConfig;
  rules: CompiledRules;
  /** Variables that were unset and replaced by placeholders (only with `allowMissingEnv`). */
  missingEnv: MissingVariable[];
}

export interface LoadOptions {
  /** Defaults to process.env. */
  env?: Env;
  /**
   * Let unset `${VAR}`s through as placeholders (for `validate` before deploying). Problems
   * that only a real value could settle are not reported; everything else is checked.
   */
  allowMissingEnv?: boolean;
}

/** Reads, validates and compiles a config file; throws ConfigError listing every problem. */
export async function loadConfig(path: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'the file does not exist: check the path, or copy config/bridge.example.yaml'
        : code === 'EISDIR'
          ? 'it is a directory, not a file'
          : `it cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError(
      [{ file: path, line: 1, column: 1, path: '', message: `cannot load the config: ${why}` }],
      {
        cause: error,
      },
    );
  }
  return parseConfigText(text, { fileName: path, ...options });
}

/** Placeholder values tried, in order, where an unset variable's value fails validation. */
const PLACEHOLDERS = [
  'https://placeholder.invalid/',
  'redis://placeholder.invalid:6379',
  '1',
  '1s',
  'placeholder',
];

/**
 * Larger config text is refused before it is parsed. Loading takes time in proportion to the size,
 * but the YAML parser needs up to about 5 µs a byte for dense flow collections (`[[[...` or
 * `[x, x, ...`, measured by test/hostile on the 2-core development machine), so this bounds one
 * load, and one hot reload in a running bridge, to a few seconds. Real configs are far smaller
 * (the example is 2 KB; a thousand rules are about 200 KB).
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Validates and compiles config text (tests and hot reload use this directly). */
export function parseConfigText(text: string, options: LoadOptions & { fileName: string }): LoadedConfig {
  const fileName = options.fileName;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) {
    const size = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 2)} MiB`;
    throw new ConfigError([
      {
        file: fileName,
        line: 1,
        column: 1,
        path: '',
        message: `the config is ${size(bytes)}, more than the ${size(MAX_CONFIG_BYTES)} a config may have: is this the right file? Remove unused rules or shorten keyword lists`,
      },
    ]);
  }
  try {
    return parseWithinLimits(text, options);
  } catch (error) {
    // The YAML parser, yaml's toJS, zod and the compiler all recurse into the document; a few
    // hundred levels of nesting exhaust the stack in one of them (which one depends on the
    // caller's stack). The yaml parser's RangeError escaped as such (found by test/hostile).
    if (!isStackOverflow(error)) throw error;
    throw new ConfigError([{ file: fileName, line: 1, column: 1, path: '', message: NESTED_TOO_DEEPLY }], {
      cause: error,
    });
  }
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function parseWithinLimits(text: string, options: LoadOptions & { fileName: string }): LoadedConfig {
  const fileName = options.fileName;
  const parsed = parseConfigDocument(text, fileName);
  if (!parsed.document) {
    throw new ConfigError(parsed.issues, { cause: parsed.yamlErrors[0] });
  }
  const document = parsed.document;
  const interpolation = interpolateEnv(document, options.env ?? process.env, {
    allowMissing: options.allowMissingEnv ?? false,
  });
  const js = documentToJs(document);
  if ('issue' in js) throw new ConfigError([js.issue, ...interpolation.issues]);

  // Values of secret-looking variables are never shown in a message (see hideEnvValues).
  const substitutedAt = new Map(
    interpolation.substituted
      .map((s) => ({ ...s, variables: s.variables.filter((v) => SECRET_VARIABLE.test(v.name)) }))
      .filter((s) => s.variables.length > 0)
      .map((s) => [pathKey(s.path), s]),
  );
  const fromEnvAt = (path: ConfigPath) => substitutedAt.get(pathKey(path));
  const describe = { hideValueAt: (path: ConfigPath) => fromEnvAt(path) !== undefined };
  const toIssue = (problem: SchemaProblem): ConfigIssue => ({
    file: fileName,
    ...locatePath(document, problem.path, { atKey: problem.atKey }),
    path: document.env.restore(problem.path.join('.')),
    message: document.env.restore(hideEnvValues(problem.message, fromEnvAt(problem.path))),
  });

  const missing = interpolation.missing;
  const value = js.value;
  const placeholderIndex = new Map<string, number>();
  let result = configSchema.safeParse(value, { reportInput: true });
  let problems = result.success ? [] : describeZodIssues(result.error.issues, describe);
  // With allowMissingEnv, swap in other placeholders where the literal `${VAR}` failed (a URL or
  // a port), so the rest of the file is still checked. Bounded by the number of placeholders.
  const allowMissing = options.allowMissingEnv ?? false;
  for (
    let round = 0;
    allowMissing && round < PLACEHOLDERS.length && !result.success && missing.length > 0;
    round++
  ) {
    let changed = false;
    for (const variable of missing) {
      if (!problems.some((p) => startsWith(p.path, variable.path))) continue;
      const key = variable.path.join('.');
      const next = placeholderIndex.get(key) ?? 0;
      const placeholder = PLACEHOLDERS[next];
      if (placeholder === undefined) continue;
      placeholderIndex.set(key, next + 1);
      setAtPath(value, variable.path, placeholder);
      changed = true;
    }
    if (!changed) break;
    result = configSchema.safeParse(value, { reportInput: true });
    problems = result.success ? [] : describeZodIssues(result.error.issues, describe);
  }

  const issues: ConfigIssue[] = [...interpolation.issues];
  for (const problem of problems) {
    const variable = missing.find((m) => startsWith(problem.path, m.path));
    // Without allowMissing the unset variable is already reported; its value says nothing more.
    if (variable && !allowMissing) continue;
    issues.push(
      toIssue(
        variable
          ? { ...problem, message: `${problem.message} (from \${${variable.name}}, which is not set)` }
          : problem,
      ),
    );
  }
  if (!result.success) {
    for (const problem of findTemplateProblems(value)) issues.push(toIssue({ ...problem, atKey: false }));
    throw new ConfigError(dedupe(issues), { cause: result.error });
  }

  const compiled = compileRules(result.data);
  for (const problem of compiled.problems) issues.push(toIssue({ ...problem, atKey: false }));
  if (issues.length > 0) throw new ConfigError(dedupe(issues));

  return { file: fileName, config: result.data, rules: compiled.rules, missingEnv: missing };
}

const pathKey = (path: ConfigPath) => path.map(String).join('\u0000');

/** Variables whose values are secrets by their name (as SECRET_PATH does for config keys). */
const SECRET_VARIABLE = /secret|passw|token|key|auth|credential|private|signature|salt|hmac|cookie|session/i;

/**
 * Messages quote the offending value (`got "..."`, `"x" is not a range`); where that value came
 * from a secret-looking environment variable, the quote shows the reference instead, as the file
 * has it. Keys at secret paths were already hidden, but a secret referenced in the wrong place
 * (`channels: [ ${WEBHOOK_SECRET} ]`) was printed in the error (found by test/hostile). Only quoted
 * text ("...", `...` and {{...}}) is rewritten, so a short value never garbles the words around it.
 * Other variables (`${PORT}` = "eighty") are still shown: that is what the author needs to see.
 */
function hideEnvValues(message: string, substituted: SubstitutedValue | undefined): string {
  if (substituted === undefined) return message;
  return message.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|\{\{[\s\S]*?\}\}/g, (quoted) => {
    let out = quoted;
    for (const { name, value } of substituted.variables) {
      const escaped = JSON.stringify(value).slice(1, -1);
      out = out.split(value).join(`\${${name}}`);
      if (escaped !== value) out = out.split(escaped).join(`\${${name}}`);
    }
    return out;
  });
}

function startsWith(path: ConfigPath, prefix: ConfigPath): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(path[i]) === String(segment));
}

function setAtPath(root: unknown, path: ConfigPath, value: unknown): void {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (node === null || typeof node !== 'object') return;
    node = (node as Record<string | number, unknown>)[path[i] as string | number];
  }
  const last = path[path.length - 1];
  if (node !== null && typeof node === 'object' && last !== undefined) {
    (node as Record<string | number, unknown>)[last] = value;
  }
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.line}:${issue.column}:${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
