import {
  type Document,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  parseDocument,
  visit,
  type YAMLError,
  type YAMLMap,
  YAMLParseError,
} from 'yaml';
import type { ConfigIssue } from './config-error.js';
import { type TokenizedText, tokenizeEnvReferences } from './env-references.js';

/** A parsed config file that can map a key path back to `line:column`. */
export interface ConfigDocument {
  readonly fileName: string;
  /** The file as written. */
  readonly text: string;
  readonly doc: Document;
  /** `${VAR}` references, replaced by tokens in what YAML parsed (see env-references.ts). */
  readonly env: TokenizedText;
  /** Start offset of each line of `text`. */
  readonly lineStarts: readonly number[];
}

export type ConfigPath = readonly (string | number)[];

/**
 * Aliases may be used (they help share lists), but a "billion laughs" document expands a few
 * lines into gigabytes; yaml's `maxAliasCount` stops that before it allocates.
 */
export const MAX_ALIAS_COUNT = 100;

/** What a document gets that exhausts the stack of the YAML parser (or of anything after it). */
export const NESTED_TOO_DEEPLY =
  'the document is nested too deeply to read (hundreds of levels of lists or mappings): a config needs a few; flatten it';

export interface ParsedConfigDocument {
  document: ConfigDocument | undefined;
  issues: ConfigIssue[];
  /** The yaml library's own errors, kept as the `cause` of the ConfigError. */
  yamlErrors: YAMLError[];
}

/** What an empty file, and a file that is not a mapping, are told (a business file is not a config). */
export interface DocumentWords {
  readonly empty: string;
  /** Followed by `, got a list` (or the value). */
  readonly notMapping: string;
}

const CONFIG_WORDS: DocumentWords = {
  empty: 'the config file is empty: start from config/bridge.example.yaml',
  notMapping: 'the config must be a mapping of sections (platform:, receiver:, rules: ...)',
};

/**
 * Parses YAML text strictly: duplicate keys, explicit tags (`!!js/function`, `!custom`, even
 * `!!str`), empty files and documents that are not a mapping are all errors, reported with their
 * position. Returns every problem found rather than stopping at the first.
 */
export function parseConfigDocument(
  text: string,
  fileName: string,
  words: DocumentWords = CONFIG_WORDS,
): ParsedConfigDocument {
  const env = tokenizeEnvReferences(text);
  const doc = parseDocument(env.text, {
    // Duplicate keys are found below in one pass: yaml's own check compares each key with every
    // earlier key of its mapping, so a mapping of 20,000 keys took seconds (test/hostile).
    uniqueKeys: false,
    prettyErrors: false,
    strict: true,
    version: '1.2',
    schema: 'core',
    merge: false,
  });
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const document: ConfigDocument = { fileName, text, doc, env, lineStarts };
  const issues: ConfigIssue[] = [];
  const errors = [...doc.errors, ...duplicateKeyErrors(doc, env)].sort((a, b) => a.pos[0] - b.pos[0]);
  const yamlErrors: YAMLError[] = errors;

  for (const error of errors) {
    const { line, column } = positionOfOffset(document, error.pos[0]);
    const message =
      error.code === 'DUPLICATE_KEY'
        ? `duplicate key ${quoteKeyAt(env.text, error.pos[0])}: each key may appear once per mapping`
        : error.code === 'MULTIPLE_DOCS'
          ? 'a second YAML document starts here: the file must be one document (remove the --- line and what follows, or merge it into the first)'
          : /call stack/i.test(error.message)
            ? NESTED_TOO_DEEPLY
            : `YAML syntax error: ${withoutSource(firstLine(error.message))}`;
    issues.push({ file: fileName, line, column, path: '', message: env.restore(message) });
  }
  if (errors.length > 0) return { document: undefined, issues, yamlErrors };

  // Tags let YAML construct arbitrary types (`!!js/function` in old js-yaml); the config has no use
  // for any of them, so refuse all, known or not, instead of passing them on as strings.
  visit(doc, {
    Node(_key, node) {
      if (node.tag !== undefined) {
        const { line, column } = positionOfOffset(document, node.range?.[0] ?? 0);
        const shown = node.tag.replace(/^tag:yaml\.org,2002:/, '!!');
        issues.push({
          file: fileName,
          line,
          column,
          path: '',
          message: `YAML tags are not allowed (found ${shown}): write a plain value instead`,
        });
      }
    },
  });

  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    issues.push({
      file: fileName,
      line: 1,
      column: 1,
      path: '',
      message: words.empty,
    });
  } else if (!isMap(doc.contents)) {
    const { line, column } = positionOfOffset(document, doc.contents.range?.[0] ?? 0);
    const got = isSeq(doc.contents) ? 'a list' : `a single value (${describeScalar(doc.contents)})`;
    issues.push({
      file: fileName,
      line,
      column,
      path: '',
      message: env.restore(`${words.notMapping}, got ${got}`),
    });
  }
  return { document: issues.length === 0 ? document : undefined, issues, yamlErrors };
}

/**
 * A second key of a mapping that lands on the same property as an earlier one (`a:` twice, or
 * `1:` and `"1":`, which yaml keeps apart but which become one key of the loaded object, the
 * later silently winning). One pass with a set per mapping, and an explicit stack (no recursion).
 */
function duplicateKeyErrors(doc: Document, env: TokenizedText): YAMLParseError[] {
  const errors: YAMLParseError[] = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key)) {
          const value = key.value;
          if (typeof value === 'number' && Number.isNaN(value)) continue;
          // Each `${VAR}` became its own token; compared as written, `${A}:` twice is a duplicate.
          const property = value === null ? '' : env.restore(String(value));
          const start = key.range?.[0];
          if (seen.has(property) && start !== undefined) {
            errors.push(new YAMLParseError([start, start + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
          }
          seen.add(property);
        } else if (isNode(key)) {
          stack.push(key);
        }
        if (isNode(pair.value)) stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) if (isNode(item)) stack.push(item);
    }
  }
  return errors;
}

/** The plain JavaScript value of the document, with alias expansion bounded. */
export function documentToJs(document: ConfigDocument): { value: unknown } | { issue: ConfigIssue } {
  try {
    return { value: document.doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (error) {
    let offset = 0;
    visit(document.doc, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const { line, column } = positionOfOffset(document, offset);
    const detail = error instanceof Error ? error.message : String(error);
    return {
      issue: {
        file: document.fileName,
        line,
        column,
        path: '',
        message: `aliases expand too much (${detail}; at most ${MAX_ALIAS_COUNT} alias uses): write the values out`,
      },
    };
  }
}

/** 1-based line and column in the original text of an offset in what YAML parsed. */
export function positionOfOffset(document: ConfigDocument, offset: number): { line: number; column: number } {
  return positionInText(document, document.env.toOriginalOffset(offset));
}

/** 1-based line and column of an offset in the original text. */
export function positionInText(document: ConfigDocument, offset: number): { line: number; column: number } {
  const starts = document.lineStarts;
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, column: offset - (starts[low] ?? 0) + 1 };
}

/**
 * Position of the node at `path`, or of the deepest ancestor that exists (a missing key is
 * reported where its mapping starts). With `atKey`, points at the last key itself, which is where
 * an unknown key is.
 */
export function locatePath(
  document: ConfigDocument,
  path: ConfigPath,
  options: { atKey?: boolean } = {},
): { line: number; column: number } {
  let node: unknown = document.doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    if (isAlias(node)) node = node.resolve(document.doc);
    if (isMap(node)) {
      const pair = pairsByKey(node).get(segment);
      if (!pair) break;
      if (options.atKey && i === path.length - 1) {
        offset = rangeStart(pair.key) ?? offset;
        break;
      }
      node = pair.value;
      // `key:` with nothing after it: point at the key.
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (item === undefined) break;
      node = item;
      offset = rangeStart(node) ?? offset;
    } else {
      break;
    }
  }
  return positionOfOffset(document, offset);
}

const pairIndexes = new WeakMap<YAMLMap, Map<unknown, Pair>>();

/**
 * The pairs of a mapping by scalar key (the first of equal keys), built once per mapping: every
 * issue is located through this, and a linear search per issue made a file with thousands of
 * problems in one mapping quadratic (test/hostile).
 */
function pairsByKey(map: YAMLMap): Map<unknown, Pair> {
  let index = pairIndexes.get(map);
  if (!index) {
    index = new Map();
    for (const item of map.items) {
      if (isPair(item) && isScalar(item.key) && !index.has(item.key.value)) index.set(item.key.value, item);
    }
    pairIndexes.set(map, index);
  }
  return index;
}

function rangeStart(node: unknown): number | undefined {
  return isNode(node) ? (node as Node).range?.[0] : undefined;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/**
 * yaml quotes the offending source in some messages (`Unexpected scalar token in YAML stream:
 * "s3cr3t"`): that can be a secret written in the file, which the error would then put in the CLI
 * output and the hot-reload log (found by test/hostile), or a `${VAR}` placeholder token. The
 * position already says where it is.
 */
function withoutSource(message: string): string {
  return message.replace(/: "(?:[^"\\]|\\.)*"$/, '');
}

function quoteKeyAt(text: string, offset: number): string {
  const rest = text.slice(offset);
  const m = /^("[^"\n]*"|'[^'\n]*'|[^:\n]*)/.exec(rest);
  const key = (m?.[1] ?? '').trim();
  return key ? `"${key.replace(/^["']|["']$/g, '')}"` : '(unknown)';
}

function describeScalar(node: unknown): string {
  if (isScalar(node)) return JSON.stringify(node.value)?.slice(0, 40) ?? 'null';
  return 'a value';
}
