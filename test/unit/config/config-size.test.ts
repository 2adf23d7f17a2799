import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { MAX_CONFIG_BYTES, parseConfigText } from '../../../src/config/load-config.js';
import { cpuMs } from '../../support/cpu-time.js';

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, { fileName: 'big.yaml', env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue);
    throw error;
  }
  throw new Error('the text loaded, but it should not have');
}

describe('config size (regression: a large dense document took seconds per megabyte to parse)', () => {
  it.each([
    ['1 MiB and 1 byte of brackets', `${HEAD}x: ${'['.repeat(MAX_CONFIG_BYTES)}`, '1.00 MiB'],
    ['2 MiB of comment', `${HEAD}#${' '.repeat(2 * MAX_CONFIG_BYTES)}`, '2.00 MiB'],
    ['multi-byte text over the limit in bytes', `${HEAD}# ${'é'.repeat(MAX_CONFIG_BYTES / 2)}`, '1.00 MiB'],
  ])('refuses %s before parsing it', (_name, text, shown) => {
    const started = cpuMs();
    const issues = issuesOf(text);
    expect(cpuMs() - started).toBeLessThan(500);
    expect(issues).toEqual([
      `big.yaml:1:1: the config is ${shown}, more than the 1 MiB a config may have: is this the right file? Remove unused rules or shorten keyword lists`,
    ]);
  });

  it('reads a config just under the limit', () => {
    const padding = MAX_CONFIG_BYTES - Buffer.byteLength(HEAD) - 2;
    expect(() =>
      parseConfigText(`${HEAD}#${' '.repeat(padding)}\n`, { fileName: 'big.yaml', env: {} }),
    ).not.toThrow();
  });
});
