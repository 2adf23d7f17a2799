import { businessNaming } from '../events/business-naming.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import { type BusinessEntry, type CollectOptions, collectBusinesses, issueAt } from './business-entries.js';
import {
  DEFAULT_BUSINESS_ID,
  defaultWebhookPath,
  type LoadedBusiness,
  type ShadowRules,
  TAKES_OVER_KEY,
} from './businesses.js';
import { crossCheckBusinesses, type ValidBusiness } from './check-businesses.js';
import type { ConfigPath } from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import type { BridgeConfig } from './config-schema.js';
import { configWarnings } from './config-warnings.js';
import type { SchemaProblem } from './describe-zod-issues.js';
import type { MissingVariable, SubstitutedValue } from './interpolate-env.js';
import { loadShadowRules, type ReadShadowFile } from './load-shadow-rules.js';
import {
  hasPath,
  isPlainObject,
  mergeOverDefaults,
  type PlainObject,
  provenanceOf,
} from './merge-business.js';
import type { ConfigSource } from './read-config-source.js';
import { compileConfigRules, type ValueEnv, validateConfigValue } from './validate-config-value.js';

/**
 * A config with `businesses:` or `businesses_dir:`: each business is the top level with
 * its entry merged over it (merge-business.ts), validated by the same schema as any config. A
 * problem is reported where its value is written: in the business's entry or file, or at the top
 * level when the business inherited it (once, however many businesses inherit it).
 */

export interface LoadedBusinesses {
  readonly businesses: LoadedBusiness[];
  /** Unset variables of the config file and of every business file. */
  readonly missingEnv: MissingVariable[];
  /** Every business's config-warnings.ts findings, placed like problems (once when shared). */
  readonly warnings: ConfigIssue[];
}

/** The sections the rules compiler reads (RulesSettings): businesses that share them share one compile. */
const RULES_SECTIONS = [
  'rules',
  'destinations',
  'timezone',
  'business_hours',
  'channels',
  'reply_window',
] as const;

/** Loads every business of the config; throws ConfigError with every problem of every business. */
export function loadBusinesses(
  top: ConfigSource,
  options: CollectOptions & { readShadowFile?: ReadShadowFile },
): LoadedBusinesses {
  const collected = collectBusinesses(top, options);
  const report = createReport(collected.entries.length);
  const warnings = createReport(collected.entries.length);
  for (const issue of top.interpolation.issues) report.plain(issue);
  for (const file of collected.files) for (const issue of file.interpolation.issues) report.plain(issue);
  for (const issue of collected.issues) report.plain(issue);
  const defaults = defaultsOf(top, report);
  const topVariables = variablesOf(top);

  const compiled = new Map<string, { rules: CompiledRules; problems: SchemaProblem[] }>();
  const candidates = new Map<string, ShadowRules | ConfigError | undefined>();
  const valid: ValidBusiness[] = [];
  const loaded: LoadedBusiness[] = [];
  for (const entry of collected.entries) {
    const merged = mergedConfigOf(entry, defaults);
    const env = envOf(entry, topVariables, defaults, options.allowMissing);
    const place = (problem: SchemaProblem) => placeProblem(problem, entry, top, defaults);
    const validation = validateConfigValue(merged, env);
    if (!validation.ok) {
      for (const problem of validation.problems) report.of(entry, place(problem));
      continue;
    }
    // Placeholders (allowMissing) may have changed the shared sections: then compile on its own.
    const key = validation.placeholders ? undefined : compileKey(merged, defaults);
    let result = key === undefined ? undefined : compiled.get(key);
    if (!result) {
      result = compileConfigRules(validation.config, env.substituted);
      if (key !== undefined) compiled.set(key, result);
    }
    for (const problem of result.problems) report.of(entry, place(problem));
    for (const warning of configWarnings(validation.config)) warnings.of(entry, place(warning));
    const shadow = shadowOf(entry, { top, defaults, config: validation.config, key, candidates, options });
    if (shadow instanceof ConfigError) for (const issue of shadow.issues) report.plain(issue);
    valid.push({ entry, config: validation.config });
    loaded.push({
      id: entry.id ?? '',
      naming: businessNaming(entry.id ?? '', entry.takesOver),
      config: validation.config,
      rules: result.rules,
      ...(shadow !== undefined && !(shadow instanceof ConfigError) ? { shadow } : {}),
      file: entry.file,
      line: entry.line,
      overrides: entry.overrides,
    });
  }
  for (const issue of crossCheckBusinesses(collected.entries, valid, { top, defaults })) report.plain(issue);
  for (const issue of takeOverIssues(collected.entries)) report.plain(issue);
  const issues = report.issues();
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    businesses: loaded,
    warnings: warnings.issues(),
    missingEnv: [
      ...top.interpolation.missing,
      ...collected.files.flatMap((file) =>
        file.interpolation.missing.map((m) => ({ ...m, file: file.document.fileName })),
      ),
    ],
  };
}

/**
 * At most one business takes over the data of a config without `businesses:`: two would run the
 * same conversations' events, timers and once-marks as two businesses.
 */
function takeOverIssues(entries: readonly BusinessEntry[]): ConfigIssue[] {
  const taking = entries.filter((entry) => entry.takesOver);
  if (taking.length <= 1) return [];
  const names = taking.map((entry) => entry.name).join(', ');
  return taking
    .slice(1)
    .map((entry) =>
      issueAt(
        entry.source,
        [...entry.base, TAKES_OVER_KEY],
        `${entry.label}: takes_over: ${DEFAULT_BUSINESS_ID} is said by ${taking.length} businesses (${names}); only one business can keep the data of a config without businesses: keep takes_over on the business that was the single business (same platform credentials and webhook), remove it from the others`,
      ),
    );
}

/**
 * A business's candidate rules (`shadow:`), from the file named where `shadow.rules` is
 * written (the business's entry or file, or the top level), compiled with the business's settings;
 * once per file and settings, however many businesses share them.
 */
function shadowOf(
  entry: BusinessEntry,
  ctx: {
    top: ConfigSource;
    defaults: PlainObject;
    config: BridgeConfig;
    key: string | undefined;
    candidates: Map<string, ShadowRules | ConfigError | undefined>;
    options: CollectOptions & { readShadowFile?: ReadShadowFile };
  },
): ShadowRules | ConfigError | undefined {
  if (ctx.config.shadow === null) return undefined;
  const own = provenanceOf(['shadow', 'rules'], ctx.defaults, entry.value).from === 'business';
  const namedIn = own ? entry.source : ctx.top;
  const settingPath = own ? [...entry.base, 'shadow', 'rules'] : ['shadow', 'rules'];
  const cacheKey =
    ctx.key === undefined
      ? undefined
      : `${namedIn.document.fileName}\u0000${ctx.config.shadow.rulesFile}\u0000${ctx.key}`;
  if (cacheKey !== undefined && ctx.candidates.has(cacheKey)) return ctx.candidates.get(cacheKey);
  let result: ShadowRules | ConfigError | undefined;
  try {
    result = loadShadowRules({
      config: ctx.config,
      namedIn,
      settingPath,
      env: ctx.options.env,
      allowMissing: ctx.options.allowMissing,
      ...(ctx.options.readShadowFile ? { read: ctx.options.readShadowFile } : {}),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    result = error;
  }
  if (cacheKey !== undefined) ctx.candidates.set(cacheKey, result);
  return result;
}

/**
 * The top level as businesses inherit it: without the list of businesses, and without the
 * webhook path and secrets, which are each business's own (refused here, with why).
 */
function defaultsOf(top: ConfigSource, report: Report): PlainObject {
  const root = top.value as PlainObject;
  const defaults = Object.fromEntries(
    Object.entries(root).filter(([key]) => key !== 'businesses' && key !== 'businesses_dir'),
  );
  const receiver = root.receiver;
  if (!isPlainObject(receiver)) return defaults;
  const own = {
    path: 'receiver.path: with businesses, each business has its own webhook path (/webhooks/<id>, or the receiver.path it sets): move this into a business, or remove it',
    secrets:
      'receiver.secrets: with businesses, each business has its own webhook secrets (the receiver.secrets it sets, else its platform.auth.secret): move these into the businesses, or remove them',
  };
  for (const [key, message] of Object.entries(own)) {
    if (Object.hasOwn(receiver, key)) report.plain(issueAt(top, ['receiver', key], message, true));
  }
  defaults.receiver = Object.fromEntries(
    Object.entries(receiver).filter(([key]) => key !== 'path' && key !== 'secrets'),
  );
  return defaults;
}

/** The business's whole config as written: its entry over the defaults, with its default webhook path. */
function mergedConfigOf(entry: BusinessEntry, defaults: PlainObject): unknown {
  const merged = mergeOverDefaults(defaults, entry.value) as PlainObject;
  const receiver = merged.receiver;
  if (receiver !== undefined && !isPlainObject(receiver)) return merged;
  if (receiver !== undefined && Object.hasOwn(receiver, 'path')) return merged;
  const path = defaultWebhookPath(entry.id ?? 'business');
  return { ...merged, receiver: { ...(receiver ?? {}), path } };
}

/** Compile once per distinct rules and settings: key the sections by whether they are the defaults'. */
function compileKey(merged: unknown, defaults: PlainObject): string {
  const value = merged as PlainObject;
  return RULES_SECTIONS.map((section) =>
    value[section] === defaults[section] ? '=' : JSON.stringify(value[section] ?? null),
  ).join('\u0000');
}

/** The `${VAR}`s of one file, split by what they belong to: the top level, or one entry of `businesses:`. */
interface FileVariables {
  readonly top: { missing: MissingVariable[]; substituted: SubstitutedValue[] };
  /** By the entry's index in `businesses:`. Grouped once: each business looking through all was quadratic. */
  readonly entries: Map<number, { missing: MissingVariable[]; substituted: SubstitutedValue[] }>;
}

function variablesOf(source: ConfigSource): FileVariables {
  const out: FileVariables = { top: { missing: [], substituted: [] }, entries: new Map() };
  const groupOf = (path: ConfigPath) => {
    if (path[0] === 'businesses_dir') return undefined;
    if (path[0] !== 'businesses') return out.top;
    const index = path[1];
    if (typeof index !== 'number') return undefined;
    let group = out.entries.get(index);
    if (!group) {
      group = { missing: [], substituted: [] };
      out.entries.set(index, group);
    }
    return group;
  };
  for (const item of source.interpolation.missing) groupOf(item.path)?.missing.push(item);
  for (const item of source.interpolation.substituted) groupOf(item.path)?.substituted.push(item);
  return out;
}

/** The `${VAR}`s of a business's merged config, at their paths in it. */
function envOf(
  entry: BusinessEntry,
  topVariables: FileVariables,
  defaults: PlainObject,
  allowMissing: boolean,
): ValueEnv {
  const fromTop = <T extends { path: ConfigPath }>(items: readonly T[]): T[] =>
    items.filter((item) => provenanceOf(item.path, defaults, entry.value).from === 'defaults');
  const fromEntry = <T extends { path: ConfigPath }>(items: readonly T[]): T[] =>
    items
      .map((item) => ({ ...item, path: item.path.slice(entry.base.length) }))
      .filter(
        (item) => item.path.length > 0 && provenanceOf(item.path, defaults, entry.value).from === 'business',
      )
      .filter((item) => hasPath(entry.value, item.path));
  // An entry of `businesses:` has its variables among the config file's; a file of its own, in it.
  const index = entry.base[1];
  const own =
    entry.base.length === 0
      ? entry.source.interpolation
      : ((typeof index === 'number' ? topVariables.entries.get(index) : undefined) ?? {
          missing: [],
          substituted: [],
        });
  const ownFile = entry.base.length === 0;
  const missing: MissingVariable[] = [
    ...fromTop(topVariables.top.missing),
    ...fromEntry(own.missing).map((m) => (ownFile ? { ...m, file: entry.file } : m)),
  ];
  const substituted: SubstitutedValue[] = [
    ...fromTop(topVariables.top.substituted),
    ...fromEntry(own.substituted),
  ];
  return { missing, substituted, allowMissing };
}

/** A problem of a business's merged config, located where its value is written. */
type PlacedProblem =
  | { readonly at: 'business'; readonly issue: ConfigIssue }
  | { readonly at: 'top'; readonly issue: ConfigIssue }
  /**
   * A required key missing in a mapping only the top level has (`destinations.crm.url`, or
   * `platform.base_url` of a business that writes no platform): reported once at the top level
   * when every business misses it, else at each business that does.
   */
  | { readonly at: 'missing'; readonly top: ConfigIssue; readonly business: ConfigIssue };

function placeProblem(
  problem: SchemaProblem,
  entry: BusinessEntry,
  top: ConfigSource,
  defaults: PlainObject,
): PlacedProblem {
  const from = provenanceOf(problem.path, defaults, entry.value);
  const atBusiness = () =>
    issueAt(
      entry.source,
      [...entry.base, ...problem.path],
      `${entry.label}: ${problem.message}`,
      problem.atKey,
    );
  if (from.from === 'business') return { at: 'business', issue: atBusiness() };
  const atTop = issueAt(top, problem.path, problem.message, problem.atKey);
  return from.missing ? { at: 'missing', top: atTop, business: atBusiness() } : { at: 'top', issue: atTop };
}

interface Report {
  /** An issue of no business in particular (the files, the list, the top level's own checks). */
  plain(issue: ConfigIssue): void;
  of(entry: BusinessEntry, placed: PlacedProblem): void;
  /** Every issue once; one at the top level that only some businesses have names them. */
  issues(): ConfigIssue[];
}

const keyOf = (issue: ConfigIssue) =>
  `${issue.file}\u0000${issue.line}:${issue.column}\u0000${issue.message}`;

function listNames(names: readonly string[]): string {
  return names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
}

function createReport(businessCount: number): Report {
  const byKey = new Map<string, { issue: ConfigIssue; businesses: Set<string> | undefined }>();
  const missing = new Map<string, { top: ConfigIssue; atBusinesses: ConfigIssue[] }>();
  const add = (issue: ConfigIssue, business: string | undefined) => {
    const key = keyOf(issue);
    let seen = byKey.get(key);
    if (!seen) {
      seen = { issue, businesses: business === undefined ? undefined : new Set() };
      byKey.set(key, seen);
    }
    if (business !== undefined) seen.businesses?.add(business);
  };
  return {
    plain: (issue) => add(issue, undefined),
    of: (entry, placed) => {
      if (placed.at === 'business') add(placed.issue, undefined);
      else if (placed.at === 'top') add(placed.issue, entry.name);
      else {
        const key = keyOf(placed.top);
        const group = missing.get(key) ?? { top: placed.top, atBusinesses: [] };
        group.atBusinesses.push(placed.business);
        missing.set(key, group);
      }
    },
    issues: () => {
      for (const { top, atBusinesses } of missing.values()) {
        if (atBusinesses.length >= businessCount) add(top, undefined);
        else for (const issue of atBusinesses) add(issue, undefined);
      }
      return [...byKey.values()].map(({ issue, businesses }) => {
        if (businesses === undefined || businesses.size === 0 || businesses.size >= businessCount)
          return issue;
        const names = [...businesses];
        return {
          ...issue,
          message: `${issue.message} (in business${names.length === 1 ? '' : 'es'} ${listNames(names)})`,
        };
      });
    },
  };
}
