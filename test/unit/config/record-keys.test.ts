import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(`${HEAD}${text}`, { fileName: 'keys.yaml', env: {} });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

describe('a key a record does not allow is reported with its own rule, at the key', () => {
  // Found while writing test/hostile's regression tests: a destination name outside
  // [A-Za-z0-9_-] was reported as zod's "Invalid key in record", at its value.
  it.each([
    [
      'a destination name with a space',
      'destinations:\n  "crm two": { url: "https://crm.example.com/hooks" }\n',
      ['keys.yaml:7:3: destinations.crm two: a destination name uses letters, digits, - and _'],
    ],
    [
      'a destination name starting with _',
      'destinations:\n  _crm: { url: "https://crm.example.com/hooks" }\n',
      ['keys.yaml:7:3: destinations._crm: a destination name uses letters, digits, - and _'],
    ],
  ])('%s', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });
});
