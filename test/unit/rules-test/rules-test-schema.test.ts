import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RuleTestFileSchema, rulesTestJsonSchema } from '../../../src/rules-test/rules-test-schema.js';

describe('the JSON Schema of rule test files', () => {
  it('matches the committed config/rules-test.schema.json (regenerate: npm run config:schema)', () => {
    const committed = JSON.parse(readFileSync('config/rules-test.schema.json', 'utf8'));
    expect(committed).toEqual(rulesTestJsonSchema());
  });

  it('is draft-07, closed to unknown keys, and describes what editors complete', () => {
    const schema = rulesTestJsonSchema() as {
      $schema: string;
      additionalProperties: boolean;
      required: string[];
      properties: Record<string, { description?: string }>;
    };
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['cases']);
    expect(Object.keys(schema.properties)).toEqual(['config', 'business', 'now', 'cases']);
    expect(schema.properties.config?.description).toMatch(/relative to this file/);
    const text = JSON.stringify(schema);
    for (const key of ['matched_include', 'actions_include', 'no_action', 'text_contains', 'event_file']) {
      expect(text).toContain(`"${key}"`);
    }
  });

  it('accepts the shipped example tests', () => {
    const file = parse(readFileSync('config/bridge.example.rules-test.yaml', 'utf8'));
    expect(RuleTestFileSchema.safeParse(file).success).toBe(true);
  });

  it('points the example test file at the schema for editors', () => {
    expect(readFileSync('config/bridge.example.rules-test.yaml', 'utf8')).toMatch(
      /^# yaml-language-server: \$schema=\.\/rules-test\.schema\.json\n/,
    );
  });
});
