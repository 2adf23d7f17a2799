import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { decodeText } from '../base/decode-text.js';
import { type CompiledRules, compileRules } from '../rules/compile-rules.js';
import { ruleSchema } from '../rules/rule-schema.js';
import type { ShadowRules } from './businesses.js';
import { type ConfigPath, locatePath } from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import type { BridgeConfig } from './config-schema.js';
import { describeZodIssues, suggestion } from './describe-zod-issues.js';
import { findTemplateProblems } from './find-template-problems.js';
import type { Env } from './interpolate-env.js';
import { type ConfigSource, oversizeIssue, readConfigSource } from './read-config-source.js';
import { createEnvHider } from './validate-config-value.js';

/**
 * Shadow rules: the candidate rule set named by `shadow.rules`, read from its own file
 * and checked like the config's rules (the same rule schema, template and compile checks, every
 * problem at its file:line:column in the candidate file). The file holds `rules:` only: the
 * candidate is evaluated with the settings (timezone, business hours, channels, reply window,
 * destinations) of the config that names it, so that a difference in the plans is a difference
 * in the rules.
 */

/** What reading a candidate file gave: its text, or why it could not be read. */
export type ShadowFileRead =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly code: string;
      readonly notText?: { line: number; column: number; message: string };
    };

/** Reads a candidate file (hot reload passes one that remembers what it read, to watch it). */
export type ReadShadowFile = (path: string) => ShadowFileRead;

export function readShadowFile(path: string): ShadowFileRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'unknown error' };
  }
  const decoded = decodeText(bytes);
  return decoded.ok ? { ok: true, text: decoded.text } : { ok: false, code: 'NOT_TEXT', notText: decoded };
}

/** `shadow.rules` as written, relative to the directory of the file that names it unless absolute. */
export function resolveShadowFile(namingFile: string, setting: string): string {
  return isAbsolute(setting) ? setting : join(dirname(namingFile), setting);
}

const CANDIDATE_WORDS = {
  empty: 'the shadow rules file is empty: write the candidate rules as a `rules:` list',
  notMapping: 'a shadow rules file must be a mapping with one key, `rules:` (the candidate rules)',
};

const candidateSchema = z.strictObject({ rules: z.array(ruleSchema) });

export interface ShadowLoadInput {
  /** The config (of the business) the candidate is evaluated with: its settings compile the candidate. */
  readonly config: BridgeConfig;
  /** The file that names the candidate, and the path of `shadow.rules` in it (for messages). */
  readonly namedIn: ConfigSource;
  readonly settingPath: ConfigPath;
  readonly env: Env;
  readonly allowMissing: boolean;
  readonly read?: ReadShadowFile;
}

/**
 * Reads, validates and compiles the candidate named by `input.config.shadow`; returns undefined when
 * the config has no `shadow:`, and throws ConfigError with every problem of the candidate file.
 */
export function loadShadowRules(input: ShadowLoadInput): ShadowRules | undefined {
  const setting = input.config.shadow;
  if (setting === null) return undefined;
  const namingFile = input.namedIn.document.fileName;
  const file = resolveShadowFile(namingFile, setting.rulesFile);
  const read = (input.read ?? readShadowFile)(file);
  const at = (message: string): ConfigIssue => ({
    file: namingFile,
    ...locatePath(input.namedIn.document, input.settingPath),
    path: input.settingPath.join('.'),
    message,
  });
  if (!read.ok) {
    if (read.notText) {
      const { line, column, message } = read.notText;
      throw new ConfigError([{ file, line, column, path: '', message }]);
    }
    const why =
      read.code === 'ENOENT'
        ? `the file ${file} does not exist: create it with a \`rules:\` list (the candidate rules), or remove shadow:`
        : read.code === 'EISDIR'
          ? `${file} is a directory: name a YAML file holding a \`rules:\` list`
          : `${file} cannot be read (${read.code})`;
    throw new ConfigError([at(`shadow.rules: ${why}`)]);
  }
  const tooBig = oversizeIssue(read.text, file, 'the shadow rules file');
  if (tooBig) throw new ConfigError([tooBig]);
  const source = readConfigSource(read.text, file, {
    env: input.env,
    allowMissing: input.allowMissing,
    words: CANDIDATE_WORDS,
  });
  const rules = validateCandidate(source, input.config);
  return { file, rules };
}

/** The candidate file's `rules:` through the config's rule schema and compiler, with the config's settings. */
function validateCandidate(source: ConfigSource, config: BridgeConfig): CompiledRules {
  const { document, interpolation } = source;
  const issues: ConfigIssue[] = [...interpolation.issues];
  const place = (path: ConfigPath, message: string, atKey = false): ConfigIssue => ({
    file: document.fileName,
    ...locatePath(document, path, { atKey }),
    path: document.env.restore(path.join('.')),
    message: document.env.restore(message),
  });
  const value = source.value as Record<string, unknown>;
  const hasRules = Object.hasOwn(value, 'rules');
  let suggested = false;
  for (const key of Object.keys(value)) {
    if (key === 'rules') continue;
    const typo = hasRules ? '' : suggestion(key, ['rules']);
    suggested ||= typo.startsWith(':');
    issues.push(
      place(
        [key],
        typo.startsWith(':')
          ? `unknown key "${key}"${typo}`
          : `unknown key "${key}": a shadow rules file holds only \`rules:\`; the candidate uses the settings (timezone, business_hours, channels, reply_window, destinations) of the config that names it`,
        true,
      ),
    );
  }
  if (!hasRules && !suggested) {
    issues.push(
      place([], 'the shadow rules file has no `rules:` list: write the candidate rules under `rules:`'),
    );
  }
  if (!hasRules) throw new ConfigError(issues);
  const hider = createEnvHider(interpolation.substituted);
  const parsed = candidateSchema.safeParse({ rules: value.rules }, { reportInput: true });
  if (!parsed.success) {
    for (const problem of describeZodIssues(parsed.error.issues, { hideValueAt: hider.hideValueAt })) {
      issues.push(place(problem.path, hider.hide(problem), problem.atKey));
    }
    for (const problem of findTemplateProblems({ rules: value.rules })) {
      issues.push(place(problem.path, hider.hide(problem)));
    }
    throw new ConfigError(dedupe(issues), { cause: parsed.error });
  }
  const compiled = compileRules({ ...config, rules: parsed.data.rules });
  for (const problem of compiled.problems) issues.push(place(problem.path, hider.hide(problem)));
  if (issues.length > 0) throw new ConfigError(dedupe(issues));
  return compiled.rules;
}

function dedupe(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.file}:${issue.line}:${issue.column}:${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
