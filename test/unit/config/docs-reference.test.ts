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

// The rules reference documents every key of the schema (rule-language keys included); the
// README's configuration reference documents every key outside the rules.
const RULE_LANGUAGE_ONLY = (key: string, schema: object): boolean => {
  const rules = (schema as { properties?: { rules?: unknown } }).properties?.rules;
  const ruleKeys = propertyNames(rules);
  const otherKeys = propertyNames({ ...(schema as { properties?: object }).properties, rules: undefined });
  return ruleKeys.has(key) && !otherKeys.has(key);
};

describe.each([
  ['docs/rules.md', () => true],
  ['README.md', (key: string) => !RULE_LANGUAGE_ONLY(key, configJsonSchema())],
] as const)('%s', (file, covers) => {
  const docs = readFileSync(file, 'utf8');
  const keys = [...propertyNames(configJsonSchema())].filter(covers).sort();

  it.each(keys)('documents the key %s', (key) => {
    expect(docs).toMatch(new RegExp(`(^|[^A-Za-z0-9_])${key}([^A-Za-z0-9_]|$)`, 'm'));
  });
});
