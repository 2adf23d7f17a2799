import { isMap, isPair, isScalar, isSeq, type Scalar } from 'yaml';
import type { ConfigDocument, ConfigPath } from './config-document.js';
import { positionInText } from './config-document.js';
import type { ConfigIssue } from './config-error.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** A `${VAR}` that was not set and had no default. */
export interface MissingVariable {
  name: string;
  /** The file it is in, when not the config file itself (a file of businesses_dir). */
  file?: string;
  path: ConfigPath;
  line: number;
  column: number;
}

/** A value in which the environment's value of one or more variables was put. */
export interface SubstitutedValue {
  path: ConfigPath;
  /** Each variable whose value (from the environment, not a default) is in the scalar. */
  variables: { name: string; value: string }[];
}

export interface InterpolationResult {
  issues: ConfigIssue[];
  missing: MissingVariable[];
  /**
   * Where values from the environment went. Error messages never show them: variables carry
   * secrets, and one referenced in the wrong place would otherwise be printed in the error.
   */
  substituted: SubstitutedValue[];
}

/**
 * Resolves `${VAR}` and `${VAR:-default}` in every string value of the parsed document, in
 * place (keys are left alone). As in the shell, `:-` uses the default when the variable is unset
 * or empty; `$${` writes a literal `${`. References in comments are ignored.
 *
 * An unset variable without default stays as the literal text `${VAR}` and is listed in
 * `missing`; unless `allowMissing` (for `validate --allow-missing-env`) it is also an issue
 * naming the variable.
 */
export function interpolateEnv(
  document: ConfigDocument,
  env: Env,
  options: { allowMissing?: boolean } = {},
): InterpolationResult {
  const result: InterpolationResult = { issues: [], missing: [], substituted: [] };
  const { marker, references } = document.env;
  if (references.size === 0) return result;
  const tokenPattern = new RegExp(`${marker}\\d+__`, 'g');
  const reported = new Set<string>();

  walk(document.doc.contents, [], (scalar, path) => {
    if (typeof scalar.value !== 'string' || !scalar.value.includes(marker)) return;
    const fromEnv: SubstitutedValue['variables'] = [];
    scalar.value = scalar.value.replace(tokenPattern, (token) => {
      const reference = references.get(token);
      if (!reference) return token;
      const at = positionInText(document, reference.offset);
      if (reference.malformed) {
        if (!reported.has(token)) {
          reported.add(token);
          result.issues.push({
            file: document.fileName,
            ...at,
            path: document.env.restore(path.join('.')),
            message: `malformed variable reference ${JSON.stringify(reference.source)}: write \${NAME} or \${NAME:-default} (NAME of letters, digits and _), or $\${ for a literal \${`,
          });
        }
        return reference.literal ?? '';
      }
      if (reference.name === undefined) return reference.literal ?? '';
      const name = reference.name;
      const current = env[name];
      if (current !== undefined && (current !== '' || reference.fallback === undefined)) {
        if (current !== '') fromEnv.push({ name, value: current });
        return current;
      }
      if (reference.fallback !== undefined) return reference.fallback;
      result.missing.push({ name, path, ...at });
      if (!options.allowMissing && !reported.has(token)) {
        reported.add(token);
        result.issues.push({
          file: document.fileName,
          ...at,
          path: document.env.restore(path.join('.')),
          message: `environment variable ${name} is not set: set it, or write \${${name}:-default} to give a default`,
        });
      }
      return `\${${name}}`;
    });
    if (fromEnv.length > 0) result.substituted.push({ path, variables: fromEnv });
  });
  // References inside malformed text never reach a scalar if YAML dropped them; report them too.
  for (const reference of references.values()) {
    if (reference.malformed && !reported.has(reference.token)) {
      result.issues.push({
        file: document.fileName,
        ...positionInText(document, reference.offset),
        path: '',
        message: `malformed variable reference ${JSON.stringify(reference.source)}: write \${NAME} or \${NAME:-default} (NAME of letters, digits and _), or $\${ for a literal \${`,
      });
    }
  }
  return result;
}

type ScalarVisitor = (scalar: Scalar, path: ConfigPath) => void;

function walk(node: unknown, path: ConfigPath, visitScalar: ScalarVisitor): void {
  if (isScalar(node)) {
    visitScalar(node, path);
  } else if (isMap(node)) {
    for (const item of node.items) {
      if (!isPair(item)) continue;
      const key = isScalar(item.key) ? item.key.value : undefined;
      const segment = typeof key === 'string' || typeof key === 'number' ? key : String(key);
      walk(item.value, [...path, segment], visitScalar);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      walk(item, [...path, index], visitScalar);
    });
  }
}
