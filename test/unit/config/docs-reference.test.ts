import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../../src/config/config-json-schema.js';

/** Every property name anywhere in the schema (sections, nested keys, rule language keys). */
function propertyNames(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) propertyNames(item, into);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties') for (const name of Object.keys(value as object)) into.add(name);
      propertyNames(value, into);
    }
  }
  return into;
}

// The configuration reference documents every key of the schema (the rules' own keys in its
// `rules[]` row); the rules reference documents every key a rule can hold (the schema's
// definitions: rule, condition, action).
const RULE_KEYS = propertyNames((configJsonSchema() as { definitions?: unknown }).definitions);

describe.each([
  ['docs/configuration.md', () => true],
  ['docs/rules.md', (key: string) => RULE_KEYS.has(key)],
] as const)('%s', (file, covers) => {
  const docs = readFileSync(file, 'utf8');
  const keys = [...propertyNames(configJsonSchema())].filter(covers).sort();

  it.each(keys)('documents the key %s', (key) => {
    expect(docs).toMatch(new RegExp(`(^|[^A-Za-z0-9_])${key}([^A-Za-z0-9_]|$)`, 'm'));
  });
});
