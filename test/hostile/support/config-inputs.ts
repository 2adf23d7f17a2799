import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  addKeyAt,
  allPaths,
  DANGEROUS_KEYS,
  hostileValue,
  type JsonPath,
  leaf,
  setAtPath,
} from './hostile-values.js';

/**
 * Config documents for parseConfigText: random YAML, the example config with one value of a wrong
 * type (or a hostile one) anywhere, and the example's text cut, spliced and salted with YAML
 * features the loader refuses (tags, anchors and alias bombs, duplicate keys, directives, deep
 * nesting, `${` references, invalid UTF-8).
 */

export const EXAMPLE_TEXT = readFileSync('config/bridge.example.yaml', 'utf8');

/** Values for the example's `${VAR}`s; the secrets are distinctive so a leak is easy to spot. */
export const EXAMPLE_ENV = {
  PLATFORM_BASE_URL: 'https://api.example.com',
  BUSINESS_ID: 'biz-1',
  SECRET_KEY: 'sk-HOSTILE-7f3a9c1e',
  WEBHOOK_SECRET: 'whsec-HOSTILE-2b8d4e60',
};
export const SECRET_VALUES = [EXAMPLE_ENV.SECRET_KEY, EXAMPLE_ENV.WEBHOOK_SECRET];

/** The example as a plain value (references replaced textually first: `{ a: ${X} }` is no YAML). */
export const EXAMPLE_VALUE: unknown = parseYaml(
  EXAMPLE_TEXT.replace(
    /\$\{([A-Z_]+)(:-([^}]*))?\}/g,
    (_m, name: string, _d, fallback: string | undefined) => {
      const value = (EXAMPLE_ENV as Record<string, string | undefined>)[name];
      return value ?? fallback ?? '';
    },
  ),
);

/** Every key the config schema knows, so random documents hit real sections as well as unknown ones. */
const CONFIG_KEYS = [
  'platform',
  'base_url',
  'form',
  'auth',
  'scheme',
  'business_id',
  'secret',
  'timeout',
  'retry',
  'receiver',
  'port',
  'path',
  'secrets',
  'body_limit',
  'redis',
  'url',
  'prefix',
  'worker',
  'timezone',
  'business_hours',
  'weekly',
  'holidays',
  'channels',
  'match',
  'kind',
  'reply_window',
  'when_closed',
  'destinations',
  'rules',
  'name',
  'on',
  'if',
  'then',
  'text',
  'any_keywords',
  'regex',
  'note',
  'reply',
  'after',
  'unless',
  'forward',
  'need_human',
  'stop',
  'cooldown',
  'mon-fri',
];

/** Scalars a YAML author (or attacker) might write. */
const yamlScalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: leaf },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '${WEBHOOK_SECRET}',
      '${UNSET_VARIABLE}',
      '${UNSET_VARIABLE:-fallback}',
      '${bad-name}',
      '${',
      '$${literal}',
      '${SECRET_KEY:-${NESTED}}',
      '{{event.text}}',
      '{{constructor.constructor}}',
      '{{',
      '15m',
      '99999999999999999999d',
      '1mb',
      '08:00-17:00',
      '24:00-25:00',
      'mon-sun',
      'https://cdn.example.com/x.pdf',
      'http://127.0.0.1:1/',
      'redis://127.0.0.1:6379',
      '(a+)+$',
      '(?<=x)y',
      '[',
      'Asia/Jakarta',
      'Mars/Olympus_Mons',
      '',
      '~',
      'null',
      '.nan',
      '-.inf',
      '0x1F',
      '0o17',
      'yes',
      'on',
    ),
  },
);

const yamlKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...CONFIG_KEYS) },
  { weight: 1, arbitrary: fc.constantFrom(...DANGEROUS_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

/** A random document value: maps with config-like, prototype and random keys, lists and scalars. */
export const yamlValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; map: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    yamlScalar,
    tie('map'),
    fc.array(tie('value'), { maxLength: 4 }),
  ),
  map: fc.dictionary(yamlKey, tie('value'), { maxKeys: 6 }),
})).value;

export interface YamlStyle {
  indent: number;
  collectionStyle: 'any' | 'block' | 'flow';
  defaultStringType: 'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE' | 'BLOCK_LITERAL' | 'BLOCK_FOLDED';
}

/** yaml's own writer, in any of its styles. */
export const stringifyOptions: fc.Arbitrary<YamlStyle> = fc.record({
  indent: fc.integer({ min: 1, max: 8 }),
  collectionStyle: fc.constantFrom('any', 'block', 'flow') as fc.Arbitrary<'any' | 'block' | 'flow'>,
  defaultStringType: fc.constantFrom(
    'PLAIN',
    'QUOTE_DOUBLE',
    'QUOTE_SINGLE',
    'BLOCK_LITERAL',
    'BLOCK_FOLDED',
  ) as fc.Arbitrary<'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE' | 'BLOCK_LITERAL' | 'BLOCK_FOLDED'>,
});

export function toYaml(value: unknown, options: YamlStyle): string {
  return stringifyYaml(value, { ...options, aliasDuplicateObjects: false, lineWidth: 0 }) ?? '';
}

/** Random YAML documents (most of them not a config at all). */
export const randomYamlDocument = fc
  .record({
    value: fc.oneof(yamlValue, fc.dictionary(yamlKey, yamlValue, { maxKeys: 8 })),
    style: stringifyOptions,
  })
  .map(({ value, style }) => toYaml(value, style));

const examplePaths = allPaths(EXAMPLE_VALUE);
const exampleObjectPaths = examplePaths.filter((p) => {
  let node: unknown = EXAMPLE_VALUE;
  for (const step of p) node = (node as Record<string | number, unknown>)[step];
  return node !== null && typeof node === 'object' && !Array.isArray(node);
});

/** The example config with one structural change: a value replaced, a key added, or a key removed. */
export const exampleStructuralMutation = fc
  .record({
    change: fc.oneof(
      fc.record({
        kind: fc.constant('replace' as const),
        path: fc.constantFrom(...examplePaths),
        value: fc.oneof(yamlScalar, hostileValue, yamlValue),
      }),
      fc.record({
        kind: fc.constant('add-key' as const),
        path: fc.constantFrom(...exampleObjectPaths),
        key: yamlKey,
        value: fc.oneof(yamlScalar, yamlValue),
      }),
      fc.record({ kind: fc.constant('remove' as const), path: fc.constantFrom(...examplePaths) }),
    ),
    style: stringifyOptions,
  })
  .map(({ change, style }) => {
    let value: unknown;
    if (change.kind === 'replace') value = setAtPath(EXAMPLE_VALUE, change.path, change.value);
    else if (change.kind === 'add-key')
      value = addKeyAt(EXAMPLE_VALUE, change.path, change.key, change.value);
    else value = removeAt(EXAMPLE_VALUE, change.path);
    return toYaml(value, style);
  });

function removeAt(root: unknown, path: JsonPath): unknown {
  if (path.length === 0) return {};
  const copy: unknown = structuredClone(root);
  let node: unknown = copy;
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[step];
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
  else if (node !== null && typeof node === 'object') delete (node as Record<string | number, unknown>)[last];
  return copy;
}

/** Lines the loader must refuse or survive, spliced into the example's text. */
const HOSTILE_LINES = [
  'x: !!js/function "function () { return process.exit(1) }"',
  'x: !custom hello',
  'x: !!binary aGVsbG8=',
  'x: !<tag:yaml.org,2002:str> tagged',
  '%YAML 1.1',
  '%TAG ! tag:evil.example,2000:',
  '---',
  '...',
  'anchor: &a [ x, y ]',
  'alias: *a',
  'alias: *undefined_anchor',
  '<<: *a',
  '<<: { polluted: yes }',
  '__proto__: { polluted: yes }',
  'constructor: { prototype: { polluted: yes } }',
  '? [ complex, key ]',
  ': value without key',
  '- list item',
  'key: "unterminated',
  "key: 'unterminated",
  'key: [ unclosed',
  'key: { unclosed: 1',
  '\tkey: tab indented',
  'key: ${UNSET_VARIABLE}',
  'key: ${bad-name}',
  'key: ${',
  'key: ${SECRET_KEY}',
  'key: |',
  'key: >-',
  'key: value # comment ${NOT_A_REFERENCE}',
  'rules: *a',
  'receiver:',
  'receiver: { secrets: [ ] }',
  'platform: null',
  '"\\u0000": nul key',
  'key: "\\uD800"',
  'key: \u0085next line',
  'key: \u2028line separator',
];

/** A self-referencing anchor chain that expands to width^depth values if aliases are followed. */
export const aliasBomb = fc
  .record({
    width: fc.integer({ min: 2, max: 12 }),
    depth: fc.integer({ min: 2, max: 10 }),
    under: fc.constantFrom('top', 'rules', 'channels', 'holidays', 'secrets'),
  })
  .map(({ width, depth, under }) => {
    const lines: string[] = [];
    const indent = under === 'top' ? '' : '  ';
    if (under !== 'top') lines.push(`bomb_${under}:`);
    lines.push(`${indent}l0: &l0 [${Array.from({ length: width }, () => '"lol"').join(', ')}]`);
    for (let level = 1; level < depth; level++) {
      const refs = Array.from({ length: width }, () => `*l${level - 1}`).join(', ');
      lines.push(`${indent}l${level}: &l${level} [${refs}]`);
    }
    const target = `*l${depth - 1}`;
    const use: Record<string, string> = {
      top: `rules: ${target}`,
      rules: `rules: ${target}`,
      channels: `channels: ${target}`,
      holidays: `business_hours: { weekly: { mon: "08:00-17:00" }, holidays: ${target} }`,
      secrets: `receiver_extra: { secrets: ${target} }`,
    };
    return { lines, use: use[under] ?? `rules: ${target}` };
  });

/** Deep nesting in flow or block style (hundreds to thousands of levels). */
const deepYaml = fc
  .record({
    depth: fc.integer({ min: 100, max: 5_000 }),
    style: fc.constantFrom('flow-seq', 'flow-map', 'block-map', 'condition'),
  })
  .map(({ depth, style }) => {
    switch (style) {
      case 'flow-seq':
        return [`deep: ${'['.repeat(depth)}1${']'.repeat(depth)}`];
      case 'flow-map':
        return [`deep: ${'{a: '.repeat(depth)}1${'}'.repeat(depth)}`];
      case 'block-map': {
        const levels = Math.min(depth, 400);
        return [
          'deep:',
          ...Array.from({ length: levels }, (_, i) => `${' '.repeat(i + 1)}k${i}:`),
          `${' '.repeat(levels + 1)}leaf`,
        ];
      }
      default:
        return [
          'rules:',
          '  - name: deep',
          '    on: message_in',
          `    if: ${'{not: '.repeat(depth)}{need_human: true}${'}'.repeat(depth)}`,
          '    then: [ { need_human: true } ]',
        ];
    }
  });

type TextEdit =
  | { kind: 'duplicate-line' | 'delete-line'; at: number }
  | { kind: 'insert-lines'; at: number; lines: string[] }
  | { kind: 'splice-bytes'; at: number; remove: number; bytes: Uint8Array }
  | { kind: 'truncate'; at: number }
  | { kind: 'indent'; at: number; delta: number }
  | { kind: 'line-endings'; style: 'crlf' | 'cr' | 'bom' }
  | { kind: 'huge-value'; at: number; length: number; unit: string };

/** Edits, weighted so that the costly ones (huge and deep values) are a small share of the runs. */
const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constantFrom('duplicate-line' as const, 'delete-line' as const),
      at: fc.nat(),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('insert-lines' as const),
      at: fc.nat(),
      lines: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_LINES).map((line) => [line]) },
        { weight: 1, arbitrary: aliasBomb.map(({ lines, use }) => [...lines, use]) },
        { weight: 1, arbitrary: deepYaml },
        {
          weight: 2,
          arbitrary: yamlValue.map((value) =>
            toYaml(
              { inserted: value },
              { indent: 2, collectionStyle: 'any', defaultStringType: 'PLAIN' },
            ).split('\n'),
          ),
        },
      ),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('splice-bytes' as const),
      at: fc.nat(),
      remove: fc.integer({ min: 0, max: 8 }),
      // Invalid UTF-8 (lone continuation bytes, truncated sequences, overlongs), NUL and controls.
      bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('indent' as const),
      at: fc.nat(),
      delta: fc.integer({ min: -3, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('line-endings' as const),
      style: fc.constantFrom('crlf' as const, 'cr' as const, 'bom' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge-value' as const),
      at: fc.nat(),
      length: fc.integer({ min: 10_000, max: 150_000 }),
      unit: fc.constantFrom('x', '{{', '${', 'é', '😀', '#', ' ', 'a: ', '[', '\\'),
    }),
  },
);

function applyEdit(text: string, edit: TextEdit): string {
  const lines = text.split('\n');
  const line = (at: number) => at % Math.max(lines.length, 1);
  switch (edit.kind) {
    case 'duplicate-line': {
      const i = line(edit.at);
      lines.splice(i, 0, lines[i] ?? '');
      return lines.join('\n');
    }
    case 'delete-line':
      lines.splice(line(edit.at), 1);
      return lines.join('\n');
    case 'insert-lines':
      lines.splice(line(edit.at), 0, ...edit.lines);
      return lines.join('\n');
    case 'splice-bytes': {
      // As readFile(path, 'utf8') would hand over a file with these bytes: invalid sequences become U+FFFD.
      const bytes = Buffer.from(text, 'utf8');
      const at = edit.at % (bytes.length + 1);
      return Buffer.concat([bytes.subarray(0, at), edit.bytes, bytes.subarray(at + edit.remove)]).toString(
        'utf8',
      );
    }
    case 'truncate':
      return text.slice(0, edit.at % (text.length + 1));
    case 'indent': {
      const i = line(edit.at);
      const current = lines[i] ?? '';
      lines[i] =
        edit.delta >= 0
          ? `${' '.repeat(edit.delta)}${current}`
          : current.replace(new RegExp(`^ {0,${-edit.delta}}`), '');
      return lines.join('\n');
    }
    case 'line-endings':
      if (edit.style === 'bom') return `\uFEFF${text}`;
      return lines.join(edit.style === 'crlf' ? '\r\n' : '\r');
    case 'huge-value': {
      const value = edit.unit.repeat(Math.ceil(edit.length / edit.unit.length));
      lines.splice(line(edit.at), 0, `huge: "${value.replace(/["\\]/g, '')}"`, `huge_plain: ${value}`);
      return lines.join('\n');
    }
  }
}

/** The example's text with one to four edits. */
export const exampleTextMutation = fc
  .array(textEdit, { minLength: 1, maxLength: 4 })
  .map((edits) => edits.reduce(applyEdit, EXAMPLE_TEXT));

/** A document of `n` similar entries of one kind, to see how the loader's time grows with size. */
export function documentOfSize(kind: ScalingKind, n: number): string {
  const head = EXAMPLE_TEXT;
  const entries = Array.from({ length: n }, (_, i) => i);
  switch (kind) {
    case 'unknown keys':
      return `${head}\n${entries.map((i) => `unknown_${i}: ${i}`).join('\n')}\n`;
    case 'duplicate keys':
      return `${head}\nextra:\n${entries.map(() => '  same: 1').join('\n')}\n`;
    case 'keys of one mapping':
      return `${head}\nextra:\n${entries.map((i) => `  k${i}: \${BAD-${i}}`).join('\n')}\n`;
    case 'destinations':
      return `${head.replace('destinations:', `destinations:\n${entries.map((i) => `  d${i}: { url: "not a url ${i}" }`).join('\n')}`)}\n`;
    case 'rules':
      return `${head}\n${entries.map((i) => `  - { name: r${i}, on: message_in, if: { text: { any_keywords: [ w${i} ] } }, then: [ { note: "n {{custmer.name}}" } ] }`).join('\n')}\n`;
  }
}
export type ScalingKind =
  | 'unknown keys'
  | 'duplicate keys'
  | 'keys of one mapping'
  | 'destinations'
  | 'rules';
export const SCALING_KINDS: readonly ScalingKind[] = [
  'unknown keys',
  'duplicate keys',
  'keys of one mapping',
  'destinations',
  'rules',
];
