import fc from 'fast-check';

/**
 * Building blocks of hostile input: keys that reach prototypes, values of every JSON type and the
 * strings senders get wrong (numbers as text, times that are no time), deep nesting and huge
 * strings. Deep and huge values are built as JSON text and parsed, as the receiver gets them:
 * JSON.parse makes `__proto__` an own key and needs no recursion for deep nesting.
 */

/** Keys that reach `Object.prototype` (or its methods) when code assigns or reads them carelessly. */
export const DANGEROUS_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isPrototypeOf',
] as const;

export const dangerousKey = fc.constantFrom(...DANGEROUS_KEYS);

/** Values that try to plant `polluted` on a prototype if merged or assigned naively. */
export const POLLUTERS: readonly string[] = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"__proto__":{"__proto__":{"polluted":"yes"}}}',
  '{"__proto__":[{"polluted":"yes"}]}',
  '{"toString":"polluted","valueOf":{"polluted":"yes"}}',
];

/** Strings that look like numbers or times but are not quite (or are, in another spelling). */
export const NUMBER_LIKE_STRINGS: readonly string[] = [
  'NaN',
  '-NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '-1e400',
  '1e-400',
  '0x1F',
  '0b101',
  '0o17',
  '1_000',
  '1,5',
  '1.5.5',
  '+12',
  '-0',
  '0',
  '00000000000000000000001',
  '9'.repeat(400),
  '１２３４５',
  '١٢٣٤',
  ' 1738056000 ',
  '\t1738056000\n',
  '1738056000abc',
  'abc1738056000',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '',
  ' ',
  '\u0000',
  '\uFEFF1738056000',
  '2024-02-30T10:00:00Z',
  '2023-02-29T10:00:00+07:00',
  '2024-04-31T00:00Z',
  '2024-13-01T10:00:00Z',
  '2024-01-01T24:30:00Z',
  '2024-01-01T23:60:00Z',
  '2024-01-01T10:00+25:00',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '10000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2024-02-30 10:00:00',
  '2024-01-01 25:00:00',
  '1969-12-31 23:59:59',
  'yesterday',
  'Tue, 28 Jan 2025 09:20:00 GMT',
];

/** Numbers of every awkward kind JSON can carry. */
export const jsonNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e-300, 1e300, Number.MAX_SAFE_INTEGER + 2, -1, 1e11, 1e14, 1e17, 1738056000),
);

/** Strings: short random text (any code unit, lone surrogates included), number-like and time-like ones. */
export const hostileString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(...NUMBER_LIKE_STRINGS),
  jsonNumber.map(String),
);

export const leaf: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  jsonNumber,
  fc.boolean(),
  fc.constant(null),
);

const anyKey = fc.oneof(
  { weight: 1, arbitrary: dangerousKey },
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
);

/** A JSON-shaped value whose objects use prototype-sensitive keys at every level. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; object: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    tie('object'),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.constantFrom(...POLLUTERS).map((text) => JSON.parse(text) as unknown),
  ),
  object: fc.dictionary(anyKey, tie('value'), { maxKeys: 5 }),
})).value;

/** Goes through JSON text, so the value is exactly what JSON.parse would hand the receiver. */
export function viaJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value) ?? 'null');
}

/** JSON text nested `depth` levels, alternating objects (under `key`) and arrays, around `core`. */
export function deepJsonText(depth: number, key: string, core: string): string {
  const open: string[] = [];
  const close: string[] = [];
  const quotedKey = JSON.stringify(key);
  for (let level = 0; level < depth; level++) {
    if (level % 2 === 0) {
      open.push(`{${quotedKey}:`);
      close.push('}');
    } else {
      open.push('[');
      close.push(']');
    }
  }
  return `${open.join('')}${core}${close.reverse().join('')}`;
}

/** A deeply nested value (thousands of levels), built without recursion. */
export const deepValue = fc
  .record({
    depth: fc.integer({ min: 1_000, max: 6_000 }),
    key: fc.oneof(dangerousKey, fc.constantFrom('a', 'message', 'content', 'data')),
    core: fc.constantFrom('1', '"x"', 'null', '{}', '[]', POLLUTERS[0] ?? '{}'),
  })
  .map(({ depth, key, core }) =>
    printable(
      JSON.parse(deepJsonText(depth, key, core)),
      `<${depth} levels under ${JSON.stringify(key)} around ${core}>`,
    ),
  );

/**
 * fast-check prints a counterexample recursively, which overflows on thousands of levels; a
 * (non-enumerable, symbol-keyed) print method gives it a short description instead. JSON, zod and
 * the receiver never see symbol keys.
 */
function printable(value: unknown, description: string): unknown {
  if (value !== null && typeof value === 'object') {
    Object.defineProperty(value, fc.toStringMethod, { value: () => description, enumerable: false });
  }
  return value;
}

/** A string of 100 KB to 1 MB (ASCII, multi-byte, or a repeated template marker). */
export const hugeString = fc
  .record({
    length: fc.integer({ min: 100_000, max: 1_000_000 }),
    unit: fc.constantFrom('x', 'é', '😀', '{{', '\\u0000', ' ', '9', '\uFFFD'),
  })
  .map(({ length, unit }) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));

/** A path into a JSON value: every container and leaf, as key/index steps. */
export type JsonPath = (string | number)[];

export function allPaths(value: unknown, prefix: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  out.push(prefix);
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      allPaths(item, [...prefix, i], out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) allPaths(item, [...prefix, key], out);
  }
  return out;
}

/** A copy of `root` with the value at `path` replaced (own data properties, even for `__proto__`). */
export function setAtPath(root: unknown, path: JsonPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: unknown = structuredClone(root);
  let node: unknown = copy;
  for (const step of path.slice(0, -1)) {
    node = (node as Record<string | number, unknown>)[step];
  }
  const last = path[path.length - 1] as string | number;
  if (node !== null && typeof node === 'object') {
    Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** A copy of `root` with one more key in the object at `path` (when there is an object there). */
export function addKeyAt(root: unknown, path: JsonPath, key: string, value: unknown): unknown {
  const copy: unknown = structuredClone(root);
  let node: unknown = copy;
  for (const step of path) node = (node as Record<string | number, unknown>)[step];
  if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
    Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** What `Object.prototype` and friends look like now, to prove later that nothing was planted. */
export function prototypeSnapshot(): string {
  const describe = (target: object) =>
    Reflect.ownKeys(target)
      .map((key) => {
        const d = Object.getOwnPropertyDescriptor(target, key);
        const kind = d === undefined ? '?' : 'value' in d ? typeof d.value : 'accessor';
        return `${String(key)}:${kind}`;
      })
      .sort()
      .join(',');
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype].map(describe).join('\n');
}

/** Cheap per-input check: nothing readable on a fresh object that should not be there. */
export function assertNotPolluted(): void {
  const probe = {} as Record<string, unknown>;
  if (probe.polluted !== undefined || Object.keys(Object.prototype).length > 0) {
    throw new Error('Object.prototype was polluted');
  }
  if (([] as unknown as Record<string, unknown>).polluted !== undefined) {
    throw new Error('Array.prototype was polluted');
  }
}
