import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allowedKeysAt, configJsonSchema } from '../../../src/config/config-json-schema.js';

describe('configJsonSchema', () => {
  it('matches the committed config/schema.json (regenerate: npm run config:schema)', () => {
    const committed = JSON.parse(readFileSync('config/schema.json', 'utf8'));
    expect(committed).toEqual(configJsonSchema());
  });

  it('is draft-07, closed to unknown keys, and lets scalars be ${VAR} references', () => {
    const schema = configJsonSchema();
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
    // Required unless the config has businesses, whose top level holds defaults only (issue 26).
    expect(schema.required).toBeUndefined();
    expect(schema.if).toEqual({ anyOf: [{ required: ['businesses'] }, { required: ['businesses_dir'] }] });
    expect((schema.else as { required: string[] }).required).toEqual(['platform', 'receiver']);
    const port = (schema.properties as Record<string, { properties: Record<string, unknown> }>).receiver
      ?.properties.port;
    expect(JSON.stringify(port)).toContain('#/definitions/env_reference');
  });

  it.each([
    [
      [],
      [
        'platform',
        'receiver',
        'redis',
        'worker',
        'admin',
        'log',
        'timezone',
        'business_hours',
        'channels',
        'reply_window',
        'destinations',
        'rules',
        'record',
        'retention',
        'story',
        'tracing',
        'shadow',
        'businesses',
        'businesses_dir',
      ],
    ],
    [
      ['businesses', 0],
      [
        'id',
        'takes_over',
        'platform',
        'receiver',
        'rules',
        'channels',
        'reply_window',
        'business_hours',
        'timezone',
        'destinations',
        'record',
        'shadow',
      ],
    ],
    [
      ['businesses', 0, 'receiver'],
      ['path', 'secrets'],
    ],
    [
      ['destinations', 'crm'],
      ['url', 'secret', 'timeout', 'retries', 'fields'],
    ],
    [
      ['rules', 3, 'then', 0],
      ['note', 'need_human', 'reply', 'forward', 'tag', 'untag', 'for', 'after', 'unless', 'clock', 'then'],
    ],
    [
      ['rules', 0, 'if', 'all', 2, 'not', 'text'],
      ['any_keywords', 'all_keywords', 'regex'],
    ],
    [['timezone'], []],
  ] as [(string | number)[], string[]][])('keys allowed at %j', (path, keys) => {
    expect(allowedKeysAt(path)).toEqual(keys);
  });
});
