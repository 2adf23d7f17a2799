import type { z } from 'zod';
import { type CompiledRules, compileRules } from '../rules/compile-rules.js';
import type { ConfigPath } from './config-document.js';
import { type BridgeConfig, configSchema } from './config-schema.js';
import { describeZodIssues, type SchemaProblem } from './describe-zod-issues.js';
import { findTemplateProblems } from './find-template-problems.js';
import type { MissingVariable, SubstitutedValue } from './interpolate-env.js';

/**
 * One config value (a whole file, or a business's merged config) through the schema, with what
 * its `${VAR}`s need: unset ones swapped for placeholders where allowed, and values taken from
 * secret-looking variables never quoted in a message. Problems come back at their path in the
 * value; the caller says where in which file that is.
 */

/** Placeholder values tried, in order, where an unset variable's value fails validation. */
const PLACEHOLDERS = [
  'https://placeholder.invalid/',
  'redis://placeholder.invalid:6379',
  '1',
  '1s',
  'placeholder',
];

/** Variables whose values are secrets by their name (as SECRET_PATH does for config keys). */
const SECRET_VARIABLE = /secret|passw|token|key|auth|credential|private|signature|salt|hmac|cookie|session/i;

/** The `${VAR}`s of a value, at their paths in it. */
export interface ValueEnv {
  readonly missing: readonly MissingVariable[];
  readonly substituted: readonly SubstitutedValue[];
  /** Let unset variables through as placeholders (validate --allow-missing-env, explain, test). */
  readonly allowMissing: boolean;
}

/** Hides environment values in messages: what every problem of a value goes through. */
export interface EnvHider {
  hideValueAt(path: ConfigPath): boolean;
  /** The problem's message with the quoted values of secret-looking variables at its path hidden. */
  hide(problem: { path: ConfigPath; message: string }): string;
}

export function createEnvHider(substituted: readonly SubstitutedValue[]): EnvHider {
  // Values of secret-looking variables are never shown in a message (see hideEnvValues).
  const substitutedAt = new Map(
    substituted
      .map((s) => ({ ...s, variables: s.variables.filter((v) => SECRET_VARIABLE.test(v.name)) }))
      .filter((s) => s.variables.length > 0)
      .map((s) => [pathKey(s.path), s]),
  );
  return {
    hideValueAt: (path) => substitutedAt.has(pathKey(path)),
    hide: (problem) => hideEnvValues(problem.message, substitutedAt.get(pathKey(problem.path))),
  };
}

export type ValueValidation =
  /** `placeholders`: some unset variable's value was replaced to pass (allowMissing). */
  | { ok: true; config: BridgeConfig; placeholders: boolean }
  /** `problems`: the schema's, then the template typos the compiler would have found. */
  | { ok: false; problems: SchemaProblem[]; cause: z.ZodError };

/**
 * Validates a config value. Messages are final (env values hidden) but not yet restored from
 * env tokens (keys keep theirs; the document that holds the key restores them). A problem in a
 * value from an unset variable is left out unless `allowMissing` (the unset variable is reported
 * itself), and says where its value came from otherwise.
 */
export function validateConfigValue(input: unknown, env: ValueEnv): ValueValidation {
  const hider = createEnvHider(env.substituted);
  const describe = { hideValueAt: hider.hideValueAt };
  const { missing, allowMissing } = env;
  let value = input;
  const placeholderIndex = new Map<string, number>();
  let result = configSchema.safeParse(value, { reportInput: true });
  let problems = result.success ? [] : describeZodIssues(result.error.issues, describe);
  // With allowMissing, swap in other placeholders where the literal `${VAR}` failed (a URL or
  // a port), so the rest of the file is still checked. Bounded by the number of placeholders.
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
      value = withValueAt(value, variable.path, placeholder);
      changed = true;
    }
    if (!changed) break;
    result = configSchema.safeParse(value, { reportInput: true });
    problems = result.success ? [] : describeZodIssues(result.error.issues, describe);
  }
  if (result.success) return { ok: true, config: result.data, placeholders: value !== input };

  const out: SchemaProblem[] = [];
  for (const problem of problems) {
    const variable = missing.find((m) => startsWith(problem.path, m.path));
    // Without allowMissing the unset variable is already reported; its value says nothing more.
    if (variable && !allowMissing) continue;
    const message = variable
      ? `${problem.message} (from \${${variable.name}}, which is not set)`
      : problem.message;
    out.push({ ...problem, message: hider.hide({ path: problem.path, message }) });
  }
  for (const problem of findTemplateProblems(value)) {
    out.push({ ...problem, atKey: false, message: hider.hide(problem) });
  }
  return { ok: false, problems: out, cause: result.error };
}

/** Compiles a valid config's rules; the problems only the whole config shows, messages final as above. */
export function compileConfigRules(
  config: BridgeConfig,
  substituted: readonly SubstitutedValue[],
): { rules: CompiledRules; problems: SchemaProblem[] } {
  const hider = createEnvHider(substituted);
  const compiled = compileRules(config);
  return {
    rules: compiled.rules,
    problems: compiled.problems.map((p) => ({ path: p.path, atKey: false, message: hider.hide(p) })),
  };
}

const pathKey = (path: ConfigPath) => path.map(String).join('\u0000');

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

export function startsWith(path: ConfigPath, prefix: ConfigPath): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(path[i]) === String(segment));
}

/**
 * `root` with `value` at `path`, copying each mapping and list on the way: a business's merged
 * config shares its parts with the top level and the other businesses, which must not change.
 */
function withValueAt(root: unknown, path: ConfigPath, value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (root === null || typeof root !== 'object') return root;
  const child = (root as Record<string | number, unknown>)[head];
  if (rest.length > 0 && (child === null || typeof child !== 'object')) return root;
  const next = withValueAt(child, rest, value);
  if (Array.isArray(root)) return root.map((item, i) => (i === head ? next : item));
  const key = String(head);
  // Object.fromEntries keeps the order of the keys and defines "__proto__" as a plain key.
  const entries = Object.entries(root as Record<string, unknown>);
  return Object.fromEntries(
    Object.hasOwn(root, key) ? entries.map(([k, v]) => [k, k === key ? next : v]) : [...entries, [key, next]],
  );
}
