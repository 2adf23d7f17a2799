import {
  type Document,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Node,
  parseDocument,
  visit,
  type YAMLError,
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

export interface ParsedConfigDocument {
  document: ConfigDocument | undefined;
  issues: ConfigIssue[];
  /** The yaml library's own errors, kept as the `cause` of the ConfigError. */
  yamlErrors: YAMLError[];
}

/**
 * Parses YAML text strictly: duplicate keys, explicit tags (`!!js/function`, `!custom`, even
 * `!!str`), empty files and documents that are not a mapping are all errors, reported with their
 * position. Returns every problem found rather than stopping at the first.
 */
export function parseConfigDocument(text: string, fileName: string): ParsedConfigDocument {
  const env = tokenizeEnvReferences(text);
  const doc = parseDocument(env.text, {
    uniqueKeys: true,
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
  const yamlErrors = [...doc.errors];

  for (const error of doc.errors) {
    const { line, column } = positionOfOffset(document, error.pos[0]);
    const message =
      error.code === 'DUPLICATE_KEY'
        ? `duplicate key ${quoteKeyAt(env.text, error.pos[0])}: each key may appear once per mapping`
        : `YAML syntax error: ${firstLine(error.message)}`;
    issues.push({ file: fileName, line, column, path: '', message });
  }
  if (doc.errors.length > 0) return { document: undefined, issues, yamlErrors };

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
      message: 'the config file is empty: start from config/bridge.example.yaml',
    });
  } else if (!isMap(doc.contents)) {
    const { line, column } = positionOfOffset(document, doc.contents.range?.[0] ?? 0);
    const got = isSeq(doc.contents) ? 'a list' : `a single value (${describeScalar(doc.contents)})`;
    issues.push({
      file: fileName,
      line,
      column,
      path: '',
      message: `the config must be a mapping of sections (platform:, receiver:, rules: ...), got ${got}`,
    });
  }
  return { document: issues.length === 0 ? document : undefined, issues, yamlErrors };
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
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && item.key.value === segment,
      );
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

function rangeStart(node: unknown): number | undefined {
  return isNode(node) ? (node as Node).range?.[0] : undefined;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
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
