import type { ConfigPath } from './config-document.js';

/**
 * How a business's entry is laid over the top level: mappings merge key by key, at
 * every depth; lists and single values replace what the top level has. One exception:
 * `business_hours.weekly` replaces too, because its keys are day ranges (`mon-fri`, `sat`), and a
 * business that writes `weekly: { mon-sun: "00:00-24:00" }` means those hours, not those plus the
 * shared `mon-fri` (which would give Monday twice).
 */

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Mappings that replace rather than merge, by their path in the file. */
const REPLACED_MAPPINGS: readonly ConfigPath[] = [['business_hours', 'weekly']];

function replacesAt(path: ConfigPath): boolean {
  return REPLACED_MAPPINGS.some((p) => p.length === path.length && p.every((s, i) => s === path[i]));
}

/** Whether the values at `path` are merged (both mappings, not a replaced one). */
function merges(defaults: unknown, override: unknown, path: ConfigPath): boolean {
  return isPlainObject(defaults) && isPlainObject(override) && !replacesAt(path);
}

/**
 * The top level's `defaults` with `override` laid over them. Neither is changed; parts that only
 * one side has are shared with it, not copied (a business without rules of its own holds the very
 * same rules list as the top level, which is what lets the loader compile it once).
 */
export function mergeOverDefaults(defaults: unknown, override: unknown, path: ConfigPath = []): unknown {
  if (override === undefined) return defaults;
  if (!merges(defaults, override, path)) return override;
  const base = defaults as PlainObject;
  const over = override as PlainObject;
  // Object.fromEntries defines keys as data properties: a key "__proto__" stays a key.
  return Object.fromEntries([
    ...Object.entries(base).map(([key, value]) =>
      Object.hasOwn(over, key) ? [key, mergeOverDefaults(value, over[key], [...path, key])] : [key, value],
    ),
    ...Object.entries(over).filter(([key]) => !Object.hasOwn(base, key)),
  ]);
}

/** Where a value of a merged config was written. */
export interface Provenance {
  /** `business`: in the business's entry (or file); `defaults`: at the top level. */
  readonly from: 'business' | 'defaults';
  /** The path in that source (the same keys, as merging keeps them). */
  readonly path: ConfigPath;
  /**
   * The value is written nowhere (a required key left out). From the business, `path` is then the
   * deepest part of it the business has, where the key would be added; from the defaults, the
   * key is missing in a mapping only the top level has.
   */
  readonly missing: boolean;
}

/**
 * Which side of `mergeOverDefaults(defaults, override)` the value at `path` came from. A value
 * nobody wrote is the business's to add (each business needs its own base_url and credentials),
 * unless it belongs in a mapping only the top level has (then it is that mapping's).
 */
export function provenanceOf(path: ConfigPath, defaults: unknown, override: unknown): Provenance {
  let d: unknown = defaults;
  let o: unknown = override;
  for (let i = 0; i < path.length; i++) {
    const segment = String(path[i]);
    const inOverride = isPlainObject(o) && Object.hasOwn(o, segment);
    const inDefaults = isPlainObject(d) && Object.hasOwn(d, segment);
    // Both sides are mappings here (the walk only goes on through merged mappings), and neither
    // has the key: the business is where to add it.
    if (!inOverride && !inDefaults) return { from: 'business', path: path.slice(0, i), missing: true };
    if (!inOverride) return { from: 'defaults', path, missing: !hasPath(d, path.slice(i)) };
    const nextO = (o as PlainObject)[segment];
    if (!inDefaults || !merges((d as PlainObject)[segment], nextO, path.slice(0, i + 1))) {
      return { from: 'business', path, missing: false };
    }
    d = (d as PlainObject)[segment];
    o = nextO;
  }
  return { from: 'business', path, missing: false };
}

/** Whether `value` has something at `path`. */
export function hasPath(value: unknown, path: ConfigPath): boolean {
  let node = value;
  for (const segment of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return false;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return true;
}
