import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'syntax.yaml', env: { VAR: 'from-the-environment' } });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('__cb_env');
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

describe('YAML syntax errors do not quote the source', () => {
  // Found by test/hostile: yaml's "Unexpected scalar token in YAML stream: \"...\"" quoted a secret
  // written in the file (then printed by the CLI and logged by the hot reloader).
  it.each([
    [
      'a secret after a stray bracket',
      'a: [ b ] ] hunter2-literal\n',
      [
        'syntax.yaml:1:10: YAML syntax error: Unexpected flow-seq-end token in YAML stream',
        'syntax.yaml:1:12: YAML syntax error: Unexpected scalar token in YAML stream',
      ],
    ],
    [
      'a secret on the line after a stray bracket',
      'receiver: { secrets: [ w ] }\n] secret: hunter2-literal\n',
      [
        'syntax.yaml:2:1: YAML syntax error: Unexpected flow-seq-end token in YAML stream',
        'syntax.yaml:2:3: YAML syntax error: Unexpected scalar token in YAML stream',
        'syntax.yaml:2:9: YAML syntax error: Unexpected map-value-ind token in YAML stream',
        'syntax.yaml:2:11: YAML syntax error: Unexpected scalar token in YAML stream',
      ],
    ],
    [
      'a variable reference after a stray bracket',
      'a: [ b ] ] ${VAR}\n',
      [
        'syntax.yaml:1:10: YAML syntax error: Unexpected flow-seq-end token in YAML stream',
        'syntax.yaml:1:12: YAML syntax error: Unexpected scalar token in YAML stream',
      ],
    ],
  ])('%s', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });
});
