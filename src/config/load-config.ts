import { NotTextError, readTextFile } from '../base/decode-text.js';
import { SINGLE_BUSINESS_NAMING } from '../events/business-naming.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import { DEFAULT_BUSINESS_ID, type LoadedBusiness } from './businesses.js';
import type { ReadBusinessesDir } from './businesses-dir.js';
import { locatePath } from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import type { BridgeConfig } from './config-schema.js';
import { configWarnings } from './config-warnings.js';
import type { SchemaProblem } from './describe-zod-issues.js';
import type { Env, MissingVariable } from './interpolate-env.js';
import { loadBusinesses } from './load-businesses.js';
import { loadShadowRules, type ReadShadowFile, readShadowFile } from './load-shadow-rules.js';
import { type ConfigSource, nestedTooDeeply, oversizeIssue, readConfigSource } from './read-config-source.js';
import { compileConfigRules, validateConfigValue } from './validate-config-value.js';

export { MAX_CONFIG_BYTES } from './read-config-source.js';

export interface LoadedConfig {
  /** The file it came from, as given. */
  file: string;
  /** With businesses, the first business's (callers that are not business-aware keep working). */
  config: BridgeConfig;
  /** With businesses, the first business's. */
  rules: CompiledRules;
  /**
   * Every business, at least one, in the config's order (then businesses_dir's files by name). A
   * config without `businesses:` is a table of one business, DEFAULT_BUSINESS_ID, of the
   * single-business naming. The bridge runs every config through this table alike.
   */
  businesses: LoadedBusiness[];
  /**
   * How the file is written: `top-level` (no `businesses:` nor `businesses_dir:`) or
   * `businesses`. For what commands print about the file (`validate`'s summary, `--business`
   * advice) only; nothing that runs the bridge reads it.
   */
  written: 'top-level' | 'businesses';
  /** Variables that were unset and replaced by placeholders (only with `allowMissingEnv`). */
  missingEnv: MissingVariable[];
  /** What the config sets up that can never happen (config-warnings.ts); `validate` prints them. */
  warnings: ConfigIssue[];
  /** The shadow rules files (`shadow.rules`) it read, resolved: hot reload watches them too. */
  shadowFiles: string[];
}

export interface LoadOptions {
  /** Defaults to process.env. */
  env?: Env;
  /**
   * Let unset `${VAR}`s through as placeholders (for `validate` before deploying). Problems
   * that only a real value could settle are not reported; everything else is checked.
   */
  allowMissingEnv?: boolean;
  /** How businesses_dir is read (hot reload passes one that remembers what it read). */
  readBusinessesDir?: ReadBusinessesDir;
  /** How shadow rules files are read (likewise). */
  readShadowFile?: ReadShadowFile;
}

/** Reads, validates and compiles a config file; throws ConfigError listing every problem. */
export async function loadConfig(path: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readTextFile(path);
  } catch (error) {
    if (error instanceof NotTextError) {
      const { line, column, detail } = error;
      throw new ConfigError([{ file: path, line, column, path: '', message: detail }], { cause: error });
    }
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

/** Validates and compiles config text (tests and hot reload use this directly). */
export function parseConfigText(text: string, options: LoadOptions & { fileName: string }): LoadedConfig {
  const fileName = options.fileName;
  const tooBig = oversizeIssue(text, fileName);
  if (tooBig) throw new ConfigError([tooBig]);
  try {
    return parseWithinLimits(text, options);
  } catch (error) {
    // The YAML parser, yaml's toJS, zod and the compiler all recurse into the document; a few
    // hundred levels of nesting exhaust the stack in one of them (which one depends on the
    // caller's stack). The yaml parser's RangeError escaped as such (found by test/hostile).
    throw nestedTooDeeply(error, fileName) ?? error;
  }
}

/** A config has businesses when it names them, in a list or a directory. */
function hasBusinesses(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    (Object.hasOwn(value, 'businesses') || Object.hasOwn(value, 'businesses_dir'))
  );
}

function parseWithinLimits(text: string, options: LoadOptions & { fileName: string }): LoadedConfig {
  const env = options.env ?? process.env;
  const allowMissing = options.allowMissingEnv ?? false;
  const source = readConfigSource(text, options.fileName, { env, allowMissing });
  // The shadow rules files read (hot reload records them through readShadowFile, also when the load fails).
  const shadowFiles = new Set<string>();
  const readShadow = options.readShadowFile ?? readShadowFile;
  const readCandidate: ReadShadowFile = (path) => {
    shadowFiles.add(path);
    return readShadow(path);
  };
  if (!hasBusinesses(source.value)) {
    return {
      ...loadOneBusiness(source, { env, allowMissing, readCandidate }),
      shadowFiles: [...shadowFiles],
    };
  }
  const { businesses, missingEnv, warnings } = loadBusinesses(source, {
    env,
    allowMissing,
    readShadowFile: readCandidate,
    ...(options.readBusinessesDir ? { readDir: options.readBusinessesDir } : {}),
  });
  const first = businesses[0] as LoadedBusiness;
  return {
    file: options.fileName,
    config: first.config,
    rules: first.rules,
    businesses,
    written: 'businesses',
    missingEnv,
    warnings,
    shadowFiles: [...shadowFiles],
  };
}

/** A config without businesses: loaded exactly as before businesses existed. */
function loadOneBusiness(
  source: ConfigSource,
  options: { env: Env; allowMissing: boolean; readCandidate: ReadShadowFile },
): Omit<LoadedConfig, 'shadowFiles'> {
  const { allowMissing } = options;
  const { document, interpolation } = source;
  const fileName = document.fileName;
  const toIssue = (problem: SchemaProblem): ConfigIssue => ({
    file: fileName,
    ...locatePath(document, problem.path, { atKey: problem.atKey }),
    path: document.env.restore(problem.path.join('.')),
    message: document.env.restore(problem.message),
  });
  const issues: ConfigIssue[] = [...interpolation.issues];
  const validation = validateConfigValue(source.value, {
    missing: interpolation.missing,
    substituted: interpolation.substituted,
    allowMissing,
  });
  if (!validation.ok) {
    for (const problem of validation.problems) issues.push(toIssue(problem));
    throw new ConfigError(dedupe(issues), { cause: validation.cause });
  }
  const compiled = compileConfigRules(validation.config, interpolation.substituted);
  for (const problem of compiled.problems) issues.push(toIssue(problem));
  if (issues.length > 0) throw new ConfigError(dedupe(issues));
  const shadow = loadShadowRules({
    config: validation.config,
    namedIn: source,
    settingPath: ['shadow', 'rules'],
    env: options.env,
    allowMissing,
    read: options.readCandidate,
  });

  const business: LoadedBusiness = {
    id: DEFAULT_BUSINESS_ID,
    naming: SINGLE_BUSINESS_NAMING,
    config: validation.config,
    rules: compiled.rules,
    ...(shadow ? { shadow } : {}),
    file: fileName,
    line: 1,
  };
  return {
    file: fileName,
    config: validation.config,
    rules: compiled.rules,
    businesses: [business],
    written: 'top-level',
    missingEnv: interpolation.missing,
    warnings: configWarnings(validation.config).map(toIssue),
  };
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
