import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'deep.yaml', env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  throw new Error('the text loaded, but it should not have');
}

const TOO_DEEP =
  'the document is nested too deeply to read (hundreds of levels of lists or mappings): a config needs a few; flatten it';

describe('documents nested too deeply are a ConfigError, never a RangeError', () => {
  // Found by test/hostile: thousands of "a: " on one line, then a flow mapping with a stray "}",
  // made yaml's parser overflow the stack, and its RangeError escaped parseConfigText.
  it.each([
    ['a stray brace after', `k: ${'a: '.repeat(3_334)}\nx: { c} }\n`],
    ['a stray brace in the example', `k: ${'a: '.repeat(3_334)}\nplatform:\n  auth: { a: b, c} }\n`],
  ])('a compact mapping thousands of levels deep, %s', (_name, text) => {
    expect(issuesOf(text)).toEqual([`deep.yaml:1:1: ${TOO_DEEP}`]);
  });

  it.each([
    ['flow lists', `x: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`],
    ['flow mappings', `x: ${'{a: '.repeat(5_000)}1${'}'.repeat(5_000)}\n`],
  ])('%s 5,000 levels deep', (_name, text) => {
    const issues = issuesOf(text);
    expect(issues.length).toBeGreaterThan(0);
    for (const issue of issues)
      expect(issue).toMatch(new RegExp(`^deep\\.yaml:1:\\d+: ${TOO_DEEP.replace(/[()]/g, '\\$&')}$`));
  });
});
