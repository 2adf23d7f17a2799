import type { z } from 'zod';
import { editDistance } from '../base/edit-distance.js';
import { looksLikeUrlWithCredentials, redactUrl } from '../base/redact-url.js';
import type { ConfigPath } from './config-document.js';
import { allowedKeysAt } from './config-json-schema.js';

/** A schema problem in words a config author understands, with the path it belongs to. */
export interface SchemaProblem {
  path: ConfigPath;
  /** Point at the key itself (unknown keys) rather than at its value. */
  atKey: boolean;
  message: string;
}

const SECRET_PATH = /secret|password|auth/i;

export interface DescribeOptions {
  /** Values that must not be shown besides those at secret-looking paths (from environment variables). */
  hideValueAt?: (path: ConfigPath) => boolean;
}

/**
 * Turns zod issues into config problems: one per unknown key, the most specific branch of a
 * union, and values shown only where they are not secret.
 */
export function describeZodIssues(
  issues: readonly z.core.$ZodIssue[],
  options: DescribeOptions = {},
): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  for (const issue of issues) collect(issue, [], out, options);
  return out;
}

type Issue<C extends z.core.$ZodIssue['code']> = Extract<z.core.$ZodIssue, { code: C }>;

/** Where an issue is, and whether its value may be shown. */
interface IssuePlace {
  readonly path: ConfigPath;
  /** The path in words, `config` at the root. */
  readonly label: string;
  readonly hideValue: boolean;
}

function collect(
  issue: z.core.$ZodIssue,
  prefix: ConfigPath,
  out: SchemaProblem[],
  options: DescribeOptions,
): void {
  const path: ConfigPath = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  const where = path.join('.');
  const label = where === '' ? 'config' : where;
  const hideValue = SECRET_PATH.test(where) || (options.hideValueAt?.(path) ?? false);
  const place: IssuePlace = { path, label, hideValue };
  switch (issue.code) {
    case 'invalid_key':
      out.push(describeInvalidKey(issue, place));
      return;
    case 'unrecognized_keys':
      for (const key of issue.keys) {
        out.push({
          path: [...path, key],
          atKey: true,
          message: `${[...path, key].join('.')}: unknown key "${key}"${suggestion(key, allowedKeysAt(path), listedKeysAt(path))}`,
        });
      }
      return;
    case 'invalid_union':
      collectUnion(issue, place, out, options);
      return;
    case 'invalid_type':
      out.push(describeInvalidType(issue, place));
      return;
    case 'invalid_value':
      out.push(describeInvalidValue(issue, place));
      return;
    case 'too_small':
    case 'too_big':
      out.push(describeOutOfBounds(issue, place));
      return;
    default: {
      // "expected a duration ..." says more with what was written.
      const input = 'input' in issue ? issue.input : undefined;
      const got =
        issue.message.startsWith('expected ') && input !== undefined
          ? `, got ${describeValue(input, hideValue)}`
          : '';
      out.push({ path, atKey: false, message: `${label}: ${issue.message}${got}` });
    }
  }
}

function describeInvalidKey(issue: Issue<'invalid_key'>, { path, label }: IssuePlace): SchemaProblem {
  // A record's key failed its own schema (`destinations: { "bad name": ... }`): zod's message
  // is "Invalid key in record"; the key schema's own message says what a key may be.
  const inner = issue.issues.map((i) => i.message).find((m) => !m.startsWith('Invalid'));
  return {
    path,
    atKey: true,
    message: `${label}: ${inner ?? `${JSON.stringify(String(path[path.length - 1] ?? ''))} is not allowed as a key here`}`,
  };
}

function collectUnion(
  issue: Issue<'invalid_union'>,
  { path, label, hideValue }: IssuePlace,
  out: SchemaProblem[],
  options: DescribeOptions,
): void {
  // Report the branch that got furthest into the value: `on: [message_in, typo]` fails in the
  // list branch at index 1, which says more than "expected a string".
  const branches = issue.errors.filter((b) => b.length > 0);
  const deepest = branches
    .map((branch) => ({ branch, depth: Math.max(...branch.map((i) => i.path.length)) }))
    .sort((a, b) => b.depth - a.depth)[0];
  if (deepest && deepest.depth > 0) {
    for (const inner of deepest.branch) collect(inner, path, out, options);
    return;
  }
  const input = 'input' in issue ? issue.input : undefined;
  if (!issue.message.startsWith('Invalid input')) {
    out.push({
      path,
      atKey: false,
      message: `${label}: ${issue.message}, got ${describeValue(input, hideValue)}`,
    });
    return;
  }
  const expected = [
    ...new Set(
      branches.flatMap((b) =>
        b.map((i) => (i.code === 'invalid_type' ? article(i.expected) : valueList(i))).filter(Boolean),
      ),
    ),
  ];
  out.push({
    path,
    atKey: false,
    message: `${label}: expected ${expected.join(' or ') || 'a different value'}, got ${describeValue(input, hideValue)}`,
  });
}

function describeInvalidType(
  issue: Issue<'invalid_type'>,
  { path, label, hideValue }: IssuePlace,
): SchemaProblem {
  const input = 'input' in issue ? issue.input : undefined;
  if (input === undefined) {
    return { path, atKey: false, message: `${label}: is required (${article(issue.expected)})` };
  }
  return {
    path,
    atKey: false,
    message: `${label}: expected ${issue.message.startsWith('Invalid input') ? article(issue.expected) : issue.message.replace(/^expected /, '')}, got ${describeValue(input, hideValue)}`,
  };
}

function describeInvalidValue(
  issue: Issue<'invalid_value'>,
  { path, label, hideValue }: IssuePlace,
): SchemaProblem {
  const input = 'input' in issue ? issue.input : undefined;
  const custom = !issue.message.startsWith('Invalid');
  return {
    path,
    atKey: false,
    message: custom
      ? `${label}: ${issue.message}`
      : `${label}: must be ${valueList(issue)}, got ${describeValue(input, hideValue)}`,
  };
}

function describeOutOfBounds(
  issue: Issue<'too_small' | 'too_big'>,
  { path, label }: IssuePlace,
): SchemaProblem {
  const generic = /^Too (small|big)/.test(issue.message);
  let message = issue.message;
  if (generic) {
    const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
    message = issue.code === 'too_small' ? `must be at least ${bound}` : `must be at most ${bound}`;
  }
  return { path, atKey: false, message: `${label}: ${message}` };
}

function valueList(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'invalid_value') return '';
  const values = issue.values.map((v) => String(v));
  return values.length === 1 ? String(values[0]) : `one of ${values.join(', ')}`;
}

function article(expected: string): string {
  switch (expected) {
    case 'object':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}

function describeValue(value: unknown, hide: boolean): string {
  if (value === null) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (hide) return `a ${typeof value}`;
  if (typeof value === 'string') {
    // A Redis or platform URL may carry a password (redis://user:password@host): never quote it.
    const shown = looksLikeUrlWithCredentials(value) ? redactUrl(value) : value;
    return JSON.stringify(shown.length > 60 ? `${shown.slice(0, 57)}...` : shown);
  }
  return `${typeof value === 'boolean' ? '' : 'the number '}${String(value)}`;
}

/**
 * The keys an "allowed here" list names: at the top level, the sections of one business's config;
 * `businesses` and `businesses_dir` are offered as near misses only, so a config of one
 * business reads as it always did.
 */
function listedKeysAt(path: ConfigPath): readonly string[] {
  const keys = allowedKeysAt(path);
  return path.length === 0 ? keys.filter((key) => key !== 'businesses' && key !== 'businesses_dir') : keys;
}

/**
 * `; did you mean "x"?` for a near miss among the keys allowed here, else the list of them
 * (`listed`, when not all of them).
 */
export function suggestion(
  key: string,
  allowed: readonly string[],
  listed: readonly string[] = allowed,
): string {
  if (allowed.length === 0) return '';
  let best: string | undefined;
  // Close enough to be a typo: one edit in short keys, two in long ones.
  let bestDistance = Math.min(2, Math.max(1, Math.floor(key.length / 3))) + 1;
  for (const known of allowed) {
    const d = editDistance(key.toLowerCase(), known);
    if (d < bestDistance) {
      bestDistance = d;
      best = known;
    }
  }
  if (best !== undefined && best !== key) return `: did you mean "${best}"?`;
  return `; allowed here: ${listed.join(', ')}`;
}
