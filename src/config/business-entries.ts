import { resolve } from 'node:path';
import {
  BUSINESS_ID_PATTERN,
  BUSINESS_ID_RULE,
  BUSINESS_RECEIVER_KEYS,
  BUSINESS_SECTIONS,
  type BusinessSection,
  DEFAULT_BUSINESS_ID,
  SHARED_SECTIONS,
  TAKES_OVER_KEY,
} from './businesses.js';
import {
  type BusinessFile,
  fileStem,
  type ReadBusinessesDir,
  readBusinessesDir,
  resolveBusinessesDir,
} from './businesses-dir.js';
import { type ConfigPath, locatePath } from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import { allowedKeysAt } from './config-json-schema.js';
import { suggestion } from './describe-zod-issues.js';
import type { Env } from './interpolate-env.js';
import { isPlainObject, type PlainObject } from './merge-business.js';
import { type ConfigSource, nestedTooDeeply, oversizeIssue, readConfigSource } from './read-config-source.js';

/** A business as written: in the config's `businesses:` list, or a file of businesses_dir. */
export interface BusinessEntry {
  /** Its id: as written, or its file's name; undefined when it has none that is a string. */
  readonly id: string | undefined;
  /** The id is given and matches BUSINESS_ID_PATTERN. */
  readonly idValid: boolean;
  /** Its id, or where it is for one without (`businesses.3`): how lists of businesses name it. */
  readonly name: string;
  /** `business "toko-a"` (or `business businesses.3`), how messages about it start. */
  readonly label: string;
  /** The file it is written in, parsed. */
  readonly source: ConfigSource;
  /** Its path in that file: `['businesses', 2]`, or `[]` for a file of its own. */
  readonly base: ConfigPath;
  /** The sections it may set, as written (refused keys left out). */
  readonly value: PlainObject;
  readonly overrides: readonly BusinessSection[];
  /** It says `takes_over: default`: it keeps the data of a config without `businesses:`. */
  readonly takesOver: boolean;
  readonly file: string;
  readonly line: number;
}

export interface CollectedBusinesses {
  readonly entries: readonly BusinessEntry[];
  readonly issues: readonly ConfigIssue[];
  /** The parsed files of businesses_dir (their unset variables are the config's too). */
  readonly files: readonly ConfigSource[];
}

export interface CollectOptions {
  readonly env: Env;
  readonly allowMissing: boolean;
  readonly readDir?: ReadBusinessesDir;
}

const BUSINESS_FILE_WORDS = {
  empty: 'the business file is empty: write the settings of this business (platform:, receiver:, rules: ...)',
  notMapping: 'a business file must be a mapping of its settings (id:, platform:, receiver:, rules: ...)',
};

/** A problem at `path` of a file, located and worded as every config problem is. */
export function issueAt(source: ConfigSource, path: ConfigPath, message: string, atKey = false): ConfigIssue {
  const document = source.document;
  return {
    file: document.fileName,
    ...locatePath(document, path, { atKey }),
    path: document.env.restore(path.join('.')),
    message: document.env.restore(message),
  };
}

/** The businesses of a config that has `businesses:` or `businesses_dir:` (or both: the list first). */
export function collectBusinesses(top: ConfigSource, options: CollectOptions): CollectedBusinesses {
  const root = top.value as PlainObject;
  const issues: ConfigIssue[] = [];
  const entries: BusinessEntry[] = [];
  const files: ConfigSource[] = [];
  if (Object.hasOwn(root, 'businesses')) {
    const list = root.businesses;
    if (list === null || (Array.isArray(list) && list.length === 0)) {
      issues.push(
        issueAt(
          top,
          ['businesses'],
          'businesses: the list is empty: list at least one business (- id: toko-a ...), or remove businesses: to run one business from the top-level settings',
        ),
      );
    } else if (!Array.isArray(list)) {
      issues.push(
        issueAt(
          top,
          ['businesses'],
          `businesses: expected a list of businesses (- id: toko-a ...), got ${kindOf(list)}`,
        ),
      );
    } else {
      list.forEach((item, i) => {
        const entry = readEntry(item, top, ['businesses', i], undefined, issues);
        if (entry) entries.push(entry);
      });
    }
  }
  if (Object.hasOwn(root, 'businesses_dir')) {
    for (const file of listDir(top, options, issues)) {
      const source = readBusinessFile(file, options, issues);
      if (!source) continue;
      files.push(source);
      const entry = readEntry(source.value, source, [], file, issues);
      if (entry) entries.push(entry);
    }
  }
  return { entries, issues, files };
}

/** The files of businesses_dir, or none with the reason among `issues`. */
function listDir(top: ConfigSource, options: CollectOptions, issues: ConfigIssue[]): readonly BusinessFile[] {
  const setting = (top.value as PlainObject).businesses_dir;
  const configFile = top.document.fileName;
  if (typeof setting !== 'string' || setting.trim() === '') {
    issues.push(
      issueAt(
        top,
        ['businesses_dir'],
        `businesses_dir: expected a directory (relative to the config file's), e.g. businesses/, got ${kindOf(setting)}`,
      ),
    );
    return [];
  }
  const dir = resolveBusinessesDir(configFile, setting);
  if (resolve(dir) === resolve(configFile, '..')) {
    issues.push(
      issueAt(
        top,
        ['businesses_dir'],
        "businesses_dir: it is the config file's own directory, but every YAML file in businesses_dir is a business: give the businesses a directory of their own, e.g. businesses/",
      ),
    );
    return [];
  }
  const listing = (options.readDir ?? readBusinessesDir)(dir);
  if (!listing.ok) {
    if (listing.file !== undefined) {
      issues.push({
        file: listing.file,
        line: 1,
        column: 1,
        path: '',
        message: `cannot read this business file (${listing.code}): check its permissions`,
      });
      return [];
    }
    const why =
      listing.code === 'ENOENT'
        ? `the directory ${dir} does not exist (businesses_dir is relative to the config file's directory): create it, or correct the path`
        : listing.code === 'ENOTDIR'
          ? `${dir} is not a directory: businesses_dir names a directory of business files`
          : `the directory ${dir} cannot be read (${listing.code})`;
    issues.push(issueAt(top, ['businesses_dir'], `businesses_dir: ${why}`));
    return [];
  }
  if (listing.files.length === 0) {
    issues.push(
      issueAt(
        top,
        ['businesses_dir'],
        `businesses_dir: ${dir} holds no business file: add one *.yaml file per business (its name is the business id unless it has id:)`,
      ),
    );
  }
  return listing.files;
}

function readBusinessFile(file: BusinessFile, options: CollectOptions, issues: ConfigIssue[]) {
  if (file.notText !== undefined) {
    const { line, column, message } = file.notText;
    issues.push({ file: file.path, line, column, path: '', message });
    return undefined;
  }
  const tooBig = oversizeIssue(file.text, file.path, 'the business file');
  if (tooBig) {
    issues.push(tooBig);
    return undefined;
  }
  try {
    return readConfigSource(file.text, file.path, {
      env: options.env,
      allowMissing: options.allowMissing,
      words: BUSINESS_FILE_WORDS,
    });
  } catch (error) {
    const deep = nestedTooDeeply(error, file.path);
    if (deep) {
      issues.push(...deep.issues);
      return undefined;
    }
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

/** One business: its id checked, its keys sorted into those it may set and those refused. */
function readEntry(
  value: unknown,
  source: ConfigSource,
  base: ConfigPath,
  file: BusinessFile | undefined,
  issues: ConfigIssue[],
): BusinessEntry | undefined {
  if (!isPlainObject(value)) {
    issues.push(
      issueAt(
        source,
        base,
        `${base.join('.')}: a business is a mapping of its settings (id:, platform:, receiver:, rules: ...), got ${kindOf(value)}`,
      ),
    );
    return undefined;
  }
  const id = readId(value, source, base, file, issues);
  const name = id ?? (base.length > 0 ? base.join('.') : source.document.fileName);
  const label = id === undefined ? `business ${name}` : `business ${JSON.stringify(clip(id))}`;
  const kept: PlainObject = {};
  for (const key of Object.keys(value)) {
    if (key === 'id' || key === TAKES_OVER_KEY) continue;
    const at = [...base, key];
    if ((BUSINESS_SECTIONS as readonly string[]).includes(key)) {
      Object.defineProperty(kept, key, {
        value: value[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if ((SHARED_SECTIONS as readonly string[]).includes(key)) {
      issues.push(
        issueAt(
          source,
          at,
          `${label}: ${key} is shared by all businesses and belongs at the top level: move it there`,
          true,
        ),
      );
    } else {
      issues.push(
        issueAt(
          source,
          at,
          `${label}: unknown key "${key}"${suggestion(key, ['id', TAKES_OVER_KEY, ...BUSINESS_SECTIONS])}`,
          true,
        ),
      );
    }
  }
  if (isPlainObject(kept.receiver))
    kept.receiver = receiverOfBusiness(kept.receiver, source, base, label, issues);
  return {
    id,
    name,
    idValid: id !== undefined && BUSINESS_ID_PATTERN.test(id),
    label,
    source,
    base,
    value: kept,
    overrides: BUSINESS_SECTIONS.filter((section) => Object.hasOwn(kept, section)),
    takesOver: readTakesOver(value, source, base, label, issues),
    file: source.document.fileName,
    line: locatePath(source.document, base).line,
  };
}

/** `takes_over:` as written: absent, or `default` (the only data a business can take over). */
function readTakesOver(
  value: PlainObject,
  source: ConfigSource,
  base: ConfigPath,
  label: string,
  issues: ConfigIssue[],
): boolean {
  if (!Object.hasOwn(value, TAKES_OVER_KEY)) return false;
  const written = value[TAKES_OVER_KEY];
  if (written === DEFAULT_BUSINESS_ID) return true;
  issues.push(
    issueAt(
      source,
      [...base, TAKES_OVER_KEY],
      `${label}: takes_over: expected ${DEFAULT_BUSINESS_ID} (the data of a config without businesses:, the only data a business can take over), got ${JSON.stringify(written)}: write takes_over: ${DEFAULT_BUSINESS_ID}, or remove it`,
    ),
  );
  return false;
}

/** `receiver:` of a business: only path and secrets; the rest belongs to the one receiver of all. */
function receiverOfBusiness(
  receiver: PlainObject,
  source: ConfigSource,
  base: ConfigPath,
  label: string,
  issues: ConfigIssue[],
): PlainObject {
  const allowed: readonly string[] = BUSINESS_RECEIVER_KEYS;
  const shared = allowedKeysAt(['receiver']);
  for (const key of Object.keys(receiver)) {
    if (allowed.includes(key)) continue;
    const at = [...base, 'receiver', key];
    issues.push(
      issueAt(
        source,
        at,
        shared.includes(key)
          ? `${label}: receiver.${key} is shared by all businesses and belongs at the top level (one receiver serves them all); a business sets only receiver.path and receiver.secrets`
          : `${label}: receiver: unknown key "${key}"${suggestion(key, allowed)}`,
        true,
      ),
    );
  }
  return Object.fromEntries(Object.entries(receiver).filter(([key]) => allowed.includes(key)));
}

/** The id as written, or the file's stem; every way it can be wrong is an issue. */
function readId(
  value: PlainObject,
  source: ConfigSource,
  base: ConfigPath,
  file: BusinessFile | undefined,
  issues: ConfigIssue[],
): string | undefined {
  const written = value.id;
  if (written === undefined) {
    if (file === undefined) {
      issues.push(
        issueAt(
          source,
          base,
          `${base.join('.')}: id is required: name the business with ${BUSINESS_ID_RULE}, e.g. id: toko-a`,
        ),
      );
      return undefined;
    }
    const stem = fileStem(file.name);
    if (!BUSINESS_ID_PATTERN.test(stem)) {
      issues.push(
        issueAt(
          source,
          [],
          `the file name ${JSON.stringify(clip(file.name))} does not make a business id (${BUSINESS_ID_RULE}): rename the file, or write an id: in it`,
        ),
      );
    }
    return stem;
  }
  const at = [...base, 'id'];
  if (typeof written !== 'string') {
    const quote = typeof written === 'number' ? `; to use it as it is, quote it: id: "${written}"` : '';
    issues.push(
      issueAt(source, at, `id: expected a string of ${BUSINESS_ID_RULE}, got ${kindOf(written)}${quote}`),
    );
    return undefined;
  }
  if (!BUSINESS_ID_PATTERN.test(written)) {
    issues.push(
      issueAt(
        source,
        at,
        `id: ${JSON.stringify(clip(written))} is not a valid business id: use ${BUSINESS_ID_RULE} (the id is used in Redis keys, metrics and --business)`,
      ),
    );
  }
  if (file !== undefined && written !== fileStem(file.name)) {
    issues.push(
      issueAt(
        source,
        at,
        `id: ${JSON.stringify(clip(written))} does not match the file name ${JSON.stringify(clip(file.name))}: rename one to match the other, or remove id: to take the file's name`,
      ),
    );
  }
  return written;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** What a value is, in words, for "expected ..., got ..." (never the value: it could be a secret). */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'true or false';
  return typeof value;
}
