import {
  type ConfigDocument,
  type DocumentWords,
  documentToJs,
  NESTED_TOO_DEEPLY,
  parseConfigDocument,
} from './config-document.js';
import { ConfigError, type ConfigIssue } from './config-error.js';
import { type Env, type InterpolationResult, interpolateEnv } from './interpolate-env.js';

/**
 * Larger config text is refused before it is parsed. Loading takes time in proportion to the size,
 * but the YAML parser needs up to about 5 µs a byte for dense flow collections (`[[[...` or
 * `[x, x, ...`, measured by test/hostile on the 2-core development machine), so this bounds one
 * load, and one hot reload in a running bridge, to a few seconds. Real configs are far smaller
 * (the example is 2 KB; a thousand rules are about 200 KB). Each file of a businesses_dir has
 * the same bound.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The issue of text over MAX_CONFIG_BYTES, if it is. */
export function oversizeIssue(text: string, fileName: string, what = 'the config'): ConfigIssue | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_CONFIG_BYTES) return undefined;
  const size = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 2)} MiB`;
  return {
    file: fileName,
    line: 1,
    column: 1,
    path: '',
    message: `${what} is ${size(bytes)}, more than the ${size(MAX_CONFIG_BYTES)} a config may have: is this the right file? Remove unused rules or shorten keyword lists`,
  };
}

/** A file parsed, its `${VAR}`s resolved, as a plain value (not yet validated). */
export interface ConfigSource {
  readonly document: ConfigDocument;
  readonly interpolation: InterpolationResult;
  readonly value: unknown;
}

export interface SourceOptions {
  readonly env: Env;
  readonly allowMissing: boolean;
  readonly words?: DocumentWords;
}

/** Parses, interpolates and converts one file; throws ConfigError when it cannot be read as a mapping. */
export function readConfigSource(text: string, fileName: string, options: SourceOptions): ConfigSource {
  const parsed = parseConfigDocument(text, fileName, options.words);
  if (!parsed.document) {
    throw new ConfigError(parsed.issues, { cause: parsed.yamlErrors[0] });
  }
  const document = parsed.document;
  const interpolation = interpolateEnv(document, options.env, { allowMissing: options.allowMissing });
  const js = documentToJs(document);
  if ('issue' in js) throw new ConfigError([js.issue, ...interpolation.issues]);
  return { document, interpolation, value: js.value };
}

/** The issue for a document that exhausted the stack somewhere after it was read (see parseConfigText). */
export function nestedTooDeeply(error: unknown, fileName: string): ConfigError | undefined {
  if (!(error instanceof RangeError && /call stack/i.test(error.message))) return undefined;
  return new ConfigError([{ file: fileName, line: 1, column: 1, path: '', message: NESTED_TOO_DEEPLY }], {
    cause: error,
  });
}
