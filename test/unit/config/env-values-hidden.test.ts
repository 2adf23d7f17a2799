import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';
const SECRET = 'whsec-LEAK-CHECK-9f8e7d';
const ENV = { WEBHOOK_SECRET: SECRET, LEVEL_TOKEN: 'loud', SHORT_KEY: '6', PORT: 'eighty' };

function issuesOf(text: string): string[] {
  try {
    parseConfigText(`${HEAD}${text}`, { fileName: 'env.yaml', env: ENV });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.message).not.toContain(SECRET);
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the text loaded, but it should not have');
}

describe('values of secret-looking environment variables never appear in config errors', () => {
  // Found by test/hostile: `channels: [ ${WEBHOOK_SECRET} ]` printed the secret in the error
  // ('channels.0: expected a mapping, got "whsec-..."'), as did templates, ranges and regexes.
  it.each([
    [
      'a secret where a mapping belongs',
      'channels:\n  - ${WEBHOOK_SECRET}\n',
      ['env.yaml:7:5: channels.0: expected a mapping, got a string'],
    ],
    [
      'a secret as opening hours',
      'business_hours:\n  weekly: { mon: "${WEBHOOK_SECRET}" }\n',
      [
        'env.yaml:7:18: business_hours.weekly.mon: "${WEBHOOK_SECRET}" is not a range: write "HH:MM-HH:MM", e.g. "08:00-17:00" or "22:00-02:00"',
      ],
    ],
    [
      'a secret inside a template',
      'rules:\n  - { name: a, on: message_in, then: [ { note: "{{${WEBHOOK_SECRET}}}" } ] }\n',
      [
        'env.yaml:7:48: rules.0.then.0.note: {{${WEBHOOK_SECRET}}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
      ],
    ],
    [
      'a secret in a regex',
      'rules:\n  - { name: a, on: message_in, if: { text: { regex: "(${WEBHOOK_SECRET}" } }, then: [ { need_human: true } ] }\n',
      [
        'env.yaml:7:53: rules.0.if.text.regex: invalid regular expression (error parsing regexp: missing closing ): `(${WEBHOOK_SECRET}`); the RE2 syntax is used: no lookaround or backreferences',
      ],
    ],
    [
      'a token where an enum belongs',
      'log: { level: "${LEVEL_TOKEN}" }\n',
      [
        'env.yaml:6:15: log.level: must be one of fatal, error, warn, info, debug, trace, silent, got a string',
      ],
    ],
  ])('%s', (_name, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });

  it('leaves the words around a short value alone (only quoted text is rewritten)', () => {
    expect(issuesOf('receiver_port: 1\nworker: { concurrency: "${SHORT_KEY}000" }\n')).toEqual([
      'env.yaml:6:1: receiver_port: unknown key "receiver_port"; allowed here: platform, receiver, redis, worker, admin, log, timezone, business_hours, channels, reply_window, destinations, rules, record, retention, story, tracing, shadow',
      'env.yaml:7:24: worker.concurrency: must be at most 1000',
    ]);
  });

  it('still shows values written in the file, and those of other variables', () => {
    expect(issuesOf('log: { level: loud }\nworker: { concurrency: "${PORT}" }\n')).toEqual([
      'env.yaml:6:15: log.level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'env.yaml:7:24: worker.concurrency: expected a whole number, got "eighty"',
    ]);
  });
});
