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

describe('docs/rules.md', () => {
  const docs = readFileSync('docs/rules.md', 'utf8');

  it.each([...propertyNames(configJsonSchema())].sort())('documents the key %s', (key) => {
    expect(docs).toMatch(new RegExp(`(^|[^A-Za-z0-9_])${key}([^A-Za-z0-9_]|$)`, 'm'));
  });
});
