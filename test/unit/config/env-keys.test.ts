import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const HEAD = 'platform:\n  base_url: https://api.example.com\n';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'keys.yaml', env: { SECRET_KEY: 'sk-1', KEY: 'k' } });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.message).not.toContain('__cb_env');
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

describe('${VAR} in a key is shown as written, never as the internal token', () => {
  // Found by test/hostile: keys are not interpolated, and errors about them showed the token the
  // loader puts in place of a reference before parsing ("unknown key \"__cb_env_0__\"").
  it.each([
    [
      'an unknown key',
      `${HEAD}  auth: { business_id: b, \${SECRET_KEY}: s }\nreceiver:\n  secrets: [ w ]\n`,
      [
        'keys.yaml:3:9: platform.auth.secret: is required (a string)',
        'keys.yaml:3:27: platform.auth.${SECRET_KEY}: unknown key "${SECRET_KEY}"; allowed here: scheme, business_id, secret',
      ],
    ],
    [
      'a duplicate key',
      `${HEAD}  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n\${KEY}: 1\n\${KEY}: 2\n`,
      ['keys.yaml:7:1: duplicate key "${KEY}": each key may appear once per mapping'],
    ],
    [
      'a whole document that is one reference',
      '${SECRET_KEY}\n',
      [
        'keys.yaml:1:1: the config must be a mapping of sections (platform:, receiver:, rules: ...), got a single value ("${SECRET_KEY}")',
      ],
    ],
  ])('%s', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });
});
