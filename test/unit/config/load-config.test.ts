import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { loadConfig, parseConfigText } from '../../../src/config/load-config.js';
import { type ConfigFixture, configFixture } from '../../fixtures/config/index.js';

const EXAMPLE = 'config/bridge.example.yaml';
const EXAMPLE_ENV = {
  PLATFORM_BASE_URL: 'https://api.example.com',
  BUSINESS_ID: 'biz-1',
  SECRET_KEY: 'secret-key',
  WEBHOOK_SECRET: 'webhook-secret',
};

async function problemsOf(path: string, env: Record<string, string> = {}): Promise<string[]> {
  try {
    await loadConfig(path, { env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.code).toBe('CONFIG_INVALID');
    // The message lists every issue, one per line, as file:line:column: message.
    for (const issue of configError.issues) expect(configError.message).toContain(formatConfigIssue(issue));
    return configError.issues.map(formatConfigIssue);
  }
  throw new Error(`${path} loaded, but it should not have`);
}

const HOSTILE: [ConfigFixture, string[]][] = [
  [
    'alias-bomb',
    [
      '7:8: aliases expand too much (Excessive alias count indicates a resource exhaustion attack; at most 100 alias uses): write the values out',
    ],
  ],
  [
    'bad-business-hours',
    [
      '9:10: business_hours.weekly.fri: fri is given twice (in "mon-fri" and "fri"): list each day once',
      '10:27: business_hours.weekly.sat.1: "8-12" is not a range: write "HH:MM-HH:MM", e.g. "08:00-17:00" or "22:00-02:00"',
      '11:10: business_hours.weekly.sun: "10:00-25:00" has a time that does not exist: hours are 00-23 (24:00 only as an end), minutes 00-59',
      '12:13: business_hours.weekly.funday: "funday" is not a day: use mon, tue, wed, thu, fri, sat, sun or a range such as mon-fri',
      '13:14: business_hours.weekly.mon-thu: mon is given twice (in "mon-fri" and "mon-thu"): list each day once',
      '13:14: business_hours.weekly.mon-thu: "12:00-12:00" is empty: start and end are the same time',
      '14:29: business_hours.holidays.1: expected a date as YYYY-MM-DD, got "2026-02-30"',
      '14:43: business_hours.holidays.2: expected a date as YYYY-MM-DD, got "25/12/2026"',
    ],
  ],
  [
    'bad-durations',
    [
      '4:12: platform.timeout: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "10 seconds"',
      '7:18: receiver.dedupe_window: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got the number 72',
      '9:20: worker.backoff.base: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "1.5s"',
      '14:51: rules.0.then.0.reply.once_per_conversation: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "12hours"',
      '15:16: rules.0.then.1.after: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "15x"',
    ],
  ],
  [
    'bad-regex',
    [
      '9:26: rules.0.if.text.regex: invalid regular expression (error parsing regexp: missing closing ): `order (#?\\d+`); the RE2 syntax is used: no lookaround or backreferences',
      '13:26: rules.1.if.text.regex: invalid regular expression (error parsing regexp: invalid or unsupported Perl syntax: `(?=`); the RE2 syntax is used: no lookaround or backreferences',
    ],
  ],
  [
    'bad-templates',
    [
      '9:27: rules.0.if.business_hours: the config has no business_hours section; add one with weekly: hours',
      '11:15: rules.0.then.0.note: unknown template variable {{custmer.name}}: "custmer" is not one of event, rule, match, customer, window, conversation, burst, tags',
      "12:15: rules.0.then.1.note: {{match.keyword}} needs a keyword test (text: any_keywords or all_keywords) in the rule's if",
      '13:15: rules.0.then.2.note: unknown template variable {{constructor.constructor}}: "constructor" is not one of event, rule, match, customer, window, conversation, burst, tags',
      '14:15: rules.0.then.3.note: unknown template variable {{__proto__}}: "__proto__" is not one of event, rule, match, customer, window, conversation, burst, tags',
      '15:15: rules.0.then.4.note: {{event.text | upper}} is not a field name: templates only insert fields like {{customer.name}}, no expressions or helpers',
      '16:24: rules.0.then.5.reply.text: unclosed "{{" at character 7: close it with "}}"',
    ],
  ],
  ['bad-timezone', ['6:11: timezone: unknown time zone: use an IANA name such as Asia/Jakarta']],
  ['comments-only', ['1:1: the config file is empty: start from config/bridge.example.yaml']],
  [
    'duplicate-keys',
    [
      '6:1: duplicate key "receiver": each key may appear once per mapping',
      '11:5: duplicate key "on": each key may appear once per mapping',
    ],
  ],
  ['empty', ['1:1: the config file is empty: start from config/bridge.example.yaml']],
  [
    'http-media',
    [
      '10:32: rules.0.then.0.reply.media.url: media URL must use https (the platform fetches it from a public https address), got http',
      '11:32: rules.0.then.1.reply.media.url: "katalog.pdf" is not a URL: write a full https:// address',
      '12:71: rules.0.then.2.reply.media.type: must be one of image, video, audio, document, got "program"',
    ],
  ],
  [
    'invalid-values',
    [
      '2:13: platform.base_url: must be an http:// or https:// URL, e.g. https://api.example.com',
      '3:9: platform.form: must be one of current, earlier, got "newest"',
      "4:9: platform.auth.business_id: business_id is required for scheme headers (it is in the dashboard's API settings)",
      '6:9: receiver.port: must be at most 65535',
      '7:12: receiver.secrets: list at least one webhook secret',
      '9:8: redis.url: must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379',
      '12:23: rules.0.on.1: must be one of message_in, ai_reply, agent_reply, message_sent, assigned, test, unknown, window_closing, got "mesage_in"',
      '13:11: rules.0.then: must list at least one action',
      '16:13: rules.1.then.0: an action does one thing; this one has note and need_human: split it into separate list items',
      '16:59: rules.1.then.1.need_human: write need_human: true',
    ],
  ],
  ['list', ['1:1: the config must be a mapping of sections (platform:, receiver:, rules: ...), got a list']],
  [
    'missing-env',
    [
      '2:13: environment variable PLATFORM_BASE_URL is not set: set it, or write ${PLATFORM_BASE_URL:-default} to give a default',
      '3:56: environment variable SECRET_KEY is not set: set it, or write ${SECRET_KEY:-default} to give a default',
      '6:15: environment variable WEBHOOK_SECRET is not set: set it, or write ${WEBHOOK_SECRET:-default} to give a default',
      '6:36: malformed variable reference "${OLD SECRET}": write ${NAME} or ${NAME:-default} (NAME of letters, digits and _), or $${ for a literal ${',
    ],
  ],
  [
    'scalar',
    [
      '1:1: the config must be a mapping of sections (platform:, receiver:, rules: ...), got a single value ("just a string")',
    ],
  ],
  [
    'syntax-error',
    ['4:1: YAML syntax error: Flow map in block collection must be sufficiently indented and end with a }'],
  ],
  [
    'unknown-destination',
    [
      '12:18: rules.0.then.0.forward: unknown destination "crmm": define it under destinations: (defined: crm)',
      '14:28: rules.0.then.1.then.0.forward: unknown destination "slack": define it under destinations: (defined: crm)',
    ],
  ],
  [
    'unknown-keys',
    [
      '1:1: platfrom: unknown key "platfrom": did you mean "platform"?',
      '4:47: platform.auth.token: unknown key "token"; allowed here: scheme, business_id, secret',
      '5:24: platform.retry.jitter: unknown key "jitter"; allowed here: retries, min_delay, max_delay, max_retry_after',
      '8:3: receiver.cors: unknown key "cors"; allowed here: host, port, path, secrets, body_limit, dedupe_window, enqueue_timeout',
      '10:48: destinations.crm.method: unknown key "method"; allowed here: url, secret, timeout, retries, fields',
      '14:5: rules.0.when: unknown key "when": did you mean "then"?',
      '15:17: rules.0.if.text: text needs any_keywords, all_keywords or regex',
      '15:19: rules.0.if.text.any_keyword: unknown key "any_keyword": did you mean "any_keywords"?',
      '15:46: rules.0.if.channel: unknown key "channel"; allowed here: engine, channel_id, channel_name, sender, content_type, has_media, need_human, text, business_hours, first_message, tags, all, any, not',
      '17:28: rules.0.then.0.reply.delay: unknown key "delay"; allowed here: text, media, once_per_conversation, reply_to_message',
      '18:81: rules.0.then.1.reply.media.size: unknown key "size"; allowed here: url, type, name, caption, mime_type',
      '20:32: rules.0.then.2.then.0.color: unknown key "color"; allowed here: note, need_human, reply, forward, tag, untag, for',
    ],
  ],
  [
    'yaml-tags',
    [
      '10:29: YAML tags are not allowed (found !!js/function): write a plain value instead',
      '11:23: YAML tags are not allowed (found !custom): write a plain value instead',
      '12:24: YAML tags are not allowed (found !!binary): write a plain value instead',
    ],
  ],
];

describe('loadConfig with hostile fixtures', () => {
  it.each(HOSTILE)('%s: reports every problem at file:line:column', async (name, expected) => {
    const file = configFixture(name);
    expect(await problemsOf(file)).toEqual(expected.map((line) => `${file}:${line}`));
  });

  it('keeps the YAML parse error as the cause', async () => {
    const error = await loadConfig(configFixture('syntax-error'), { env: {} }).catch((e: unknown) => e);
    expect((error as ConfigError).cause).toMatchObject({ name: 'YAMLParseError' });
  });

  it('reports a file that does not exist', async () => {
    expect(await problemsOf('test/fixtures/config/nope.yaml')).toEqual([
      'test/fixtures/config/nope.yaml:1:1: cannot load the config: the file does not exist: check the path, or copy config/bridge.example.yaml',
    ]);
  });
});

describe('the example config', () => {
  it('validates as written with its variables set', async () => {
    const loaded = await loadConfig(EXAMPLE, { env: EXAMPLE_ENV });
    expect(loaded.config.rules.map((r) => r.name)).toEqual([
      'escalate-complaints',
      'catalog',
      'after-hours',
      'ai-unsure',
    ]);
    expect(loaded.config.platform).toMatchObject({
      baseUrl: 'https://api.example.com',
      form: 'current',
      auth: { scheme: 'headers', businessId: 'biz-1', secret: 'secret-key' },
      timeoutMs: 10_000,
      rateLimit: null,
    });
    expect(loaded.config.receiver).toMatchObject({
      port: 8080,
      secrets: ['webhook-secret'],
      bodyLimitBytes: 1024 * 1024,
    });
    expect(loaded.config.destinations.crm).toEqual({
      url: 'http://127.0.0.1:3000/hooks',
      secret: 'change-me',
      timeoutMs: 10_000,
      retries: 3,
      fields: null,
    });
    expect(loaded.rules.rules).toHaveLength(4);
    expect(loaded.missingEnv).toEqual([]);
  });

  it('starts with the schema comment for editors', () => {
    expect(readFileSync(EXAMPLE, 'utf8').split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./schema.json',
    );
  });

  it('names each unset variable with its line and column', async () => {
    expect(await problemsOf(EXAMPLE)).toEqual([
      `${EXAMPLE}:3:13: environment variable PLATFORM_BASE_URL is not set: set it, or write ${'${PLATFORM_BASE_URL:-default}'} to give a default`,
      `${EXAMPLE}:5:41: environment variable BUSINESS_ID is not set: set it, or write ${'${BUSINESS_ID:-default}'} to give a default`,
      `${EXAMPLE}:5:65: environment variable SECRET_KEY is not set: set it, or write ${'${SECRET_KEY:-default}'} to give a default`,
      `${EXAMPLE}:9:15: environment variable WEBHOOK_SECRET is not set: set it, or write ${'${WEBHOOK_SECRET:-default}'} to give a default`,
    ]);
  });

  it('validates with placeholders when missing variables are allowed', async () => {
    const loaded = await loadConfig(EXAMPLE, { env: {}, allowMissingEnv: true });
    expect(loaded.missingEnv.map((m) => `${m.name}@${m.line}:${m.column}`)).toEqual([
      'PLATFORM_BASE_URL@3:13',
      'BUSINESS_ID@5:41',
      'SECRET_KEY@5:65',
      'WEBHOOK_SECRET@9:15',
    ]);
    expect(loaded.config.rules).toHaveLength(4);
  });

  it('the demo config loads with no variables at all', async () => {
    const loaded = await loadConfig('config/demo.yaml', { env: {} });
    expect(loaded.config.platform.baseUrl).toBe('http://127.0.0.1:4010');
    expect(loaded.config.rules.map((r) => r.name)).toEqual([
      'escalate-complaints',
      'catalog',
      'after-hours-whatsapp',
      'after-hours',
      'ai-unsure',
    ]);
  });
});

const MINIMAL = `platform:
  base_url: https://api.example.com
  auth: { business_id: biz-1, secret: s3cret }
receiver:
  secrets: [ whsec-1 ]
`;

function parse(text: string, env: Record<string, string> = {}) {
  return parseConfigText(text, { fileName: 'inline.yaml', env });
}

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    parse(text, env);
  } catch (error) {
    return (error as ConfigError).issues.map(formatConfigIssue);
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('fills every section from a minimal file', () => {
    const { config } = parse(MINIMAL);
    expect(config.receiver).toEqual({
      host: '0.0.0.0',
      port: 8080,
      path: '/webhooks/platform',
      secrets: ['whsec-1'],
      secretsDefaulted: false,
      bodyLimitBytes: 1_048_576,
      enqueueTimeoutMs: 2_000,
    });
    // Issue 27: what each store keeps, and for how long.
    expect(config.retention).toEqual({
      doneEventsMs: 0,
      failedEventsMs: 7 * 86_400_000,
      deadLettersMs: 30 * 86_400_000,
      quarantineMs: 30 * 86_400_000,
      conversationsMs: 30 * 86_400_000,
      storiesMs: 30 * 86_400_000,
      recordedEventsMs: 7 * 86_400_000,
      dedupeMs: 72 * 3_600_000,
      eventStreamMaxLen: 100,
    });
    expect(config.story).toEqual({
      enabled: false,
      maxEntries: 200,
      redact: { texts: false, phones: false, emails: false, cards: false, nationalIds: false },
    });
    expect(config.oldKeys).toEqual([]);
    expect(config.platform.retry).toEqual({
      retries: 3,
      minDelayMs: 100,
      maxDelayMs: 2_000,
      maxRetryAfterMs: 5_000,
    });
    expect(config.redis).toEqual({
      topology: { kind: 'single', url: 'redis://127.0.0.1:6379' },
      prefix: 'cb',
      shards: 1,
      replicasAck: 0,
      replicasAckTimeoutMs: 500,
    });
    expect(config.worker).toEqual({
      shards: null,
      concurrency: 16,
      businessConcurrency: 8,
      attempts: 8,
      backoff: { baseMs: 1_000, maxMs: 300_000 },
      rateLimitPauseCapMs: 60_000,
      authFailurePauseMs: 30_000,
      shutdownGraceMs: 25_000,
      safetyMarginMs: 60_000,
      lockDurationMs: 30_000,
      stalledIntervalMs: 15_000,
      reconcileSkewMs: 5_000,
    });
    expect(config.admin).toEqual({ username: 'admin', listen: null, frameAncestors: [], linkSecret: null });
    expect(config.log).toEqual({ level: 'info' });
    expect(config.timezone).toBe('Asia/Jakarta');
    expect(config.businessHours).toBeNull();
    expect(config.replyWindow).toEqual({
      appliesTo: ['whatsapp_api', 'instagram', 'messenger'],
      hours: 24,
      whenClosed: [],
    });
    expect(config.rules).toEqual([]);
  });

  it('rate limits the earlier form at 100 per minute unless told otherwise', () => {
    const earlier = MINIMAL.replace('base_url:', 'form: earlier\n  base_url:');
    expect(parse(earlier).config.platform.rateLimit).toEqual({ max: 100, perMs: 60_000 });
    const custom = earlier.replace('form: earlier', 'form: earlier\n  rate_limit: { max: 30, per: 10s }');
    expect(parse(custom).config.platform.rateLimit).toEqual({ max: 30, perMs: 10_000 });
  });

  it('needs no business_id for bearer-secret', () => {
    const text = MINIMAL.replace(
      '{ business_id: biz-1, secret: s3cret }',
      '{ scheme: bearer-secret, secret: s3cret }',
    );
    expect(parse(text).config.platform.auth).toEqual({
      scheme: 'bearer-secret',
      businessId: undefined,
      secret: 's3cret',
      schemeDefaulted: false,
    });
  });

  // Issue 12: the earlier form's credentials are the plain bearer, so `secret` alone is enough.
  it('takes bearer-secret for form: earlier when no scheme is given, headers for the current form', () => {
    const earlier = MINIMAL.replace('base_url:', 'form: earlier\n  base_url:').replace(
      '{ business_id: biz-1, secret: s3cret }',
      '{ secret: s3cret }',
    );
    expect(parse(earlier).config.platform.auth).toEqual({
      scheme: 'bearer-secret',
      businessId: undefined,
      secret: 's3cret',
      schemeDefaulted: true,
    });
    expect(parse(MINIMAL).config.platform.auth).toMatchObject({ scheme: 'headers', schemeDefaulted: true });
    expect(problems(MINIMAL.replace('{ business_id: biz-1, secret: s3cret }', '{ secret: s3cret }'))).toEqual(
      [
        "inline.yaml:3:9: platform.auth.business_id: business_id is required for scheme headers, the current form's default (it is in the dashboard's API settings)",
      ],
    );
  });

  // Issue 12: webhook calls carry the Secret Key (interface, Authentication rule 3).
  it('accepts the platform Secret Key as the webhook secret when receiver.secrets is not given', () => {
    const text = MINIMAL.replace('receiver:\n  secrets: [ whsec-1 ]\n', 'receiver: {}\n');
    expect(text).not.toContain('whsec-1');
    expect(parse(text).config.receiver).toMatchObject({ secrets: ['s3cret'], secretsDefaulted: true });
    expect(problems(MINIMAL.replace('[ whsec-1 ]', '[]'))).toEqual([
      'inline.yaml:5:12: receiver.secrets: list at least one webhook secret',
    ]);
  });
});

describe('environment variables', () => {
  it.each([
    ['${PORT}', { PORT: '9090' }, 9090],
    ['${PORT:-8081}', {}, 8081],
    ['${PORT:-8081}', { PORT: '' }, 8081],
    ['"${PORT:-8082}"', {}, 8082],
  ])('port: %s with %j is %d', (value, env, port) => {
    expect(parse(`${MINIMAL}  port: ${value}\n`, env).config.receiver.port).toBe(port);
  });

  it('substitutes inside strings and leaves a $${ as a literal', () => {
    const text = MINIMAL.replace('whsec-1', () => '"pre-${A}-$${B}-${C:-c}"');
    expect(parse(text, { A: 'a' }).config.receiver.secrets).toEqual(['pre-a-${B}-c']);
  });

  it('cannot change the structure of the file through a value', () => {
    const text = MINIMAL.replace('whsec-1', '${EVIL}');
    const evil = 'x ]\nrules: [ { name: injected } ]\n# ';
    expect(parse(text, { EVIL: evil }).config.receiver.secrets).toEqual([evil]);
  });

  it('ignores references in comments', () => {
    expect(() => parse(`# set \${NOT_SET} before starting\n${MINIMAL}`)).not.toThrow();
  });

  it('reports a number that is not one after substitution', () => {
    expect(problems(`${MINIMAL}  port: \${PORT}\n`, { PORT: 'eighty' })).toEqual([
      'inline.yaml:6:9: receiver.port: expected a whole number, got "eighty"',
    ]);
  });
});

describe('rule checks that need the whole config', () => {
  it.each([
    [
      'duplicate rule names',
      `rules:\n  - { name: a, on: message_in, then: [ { need_human: true } ] }\n  - { name: a, on: ai_reply, then: [ { need_human: true } ] }\n`,
      [
        'inline.yaml:8:13: rules.1.name: "a" is already the name of rules.0: names must be unique (they key once-marks and cooldowns)',
      ],
    ],
    [
      'a reply in when_closed',
      `reply_window:\n  when_closed: [ { reply: { text: hi } } ]\n`,
      [
        'inline.yaml:7:27: reply_window.when_closed.0.reply: when_closed runs because a reply cannot be sent; use note, need_human or forward',
      ],
    ],
    [
      'match.keyword in when_closed used by a rule without keywords',
      `reply_window:\n  when_closed: [ { note: "{{match.keyword}}" } ]\nrules:\n  - { name: r, on: message_in, then: [ { reply: { text: hi } } ] }\n`,
      [
        'inline.yaml:7:26: reply_window.when_closed.0.note: {{match.keyword}} needs a keyword test (text: any_keywords or all_keywords) in the rule\'s if (used by rule "r", which replies)',
      ],
    ],
    [
      'match.regex_match without a regex',
      `rules:\n  - name: r\n    on: message_in\n    if: { text: { any_keywords: [ order ] } }\n    then: [ { note: "{{match.regex_match}}" } ]\n`,
      [
        "inline.yaml:10:21: rules.0.then.0.note: {{match.regex_match}} needs a text: regex test in the rule's if",
      ],
    ],
    [
      'a timer without then',
      `rules:\n  - { name: r, on: message_in, then: [ { after: 5m } ] }\n`,
      ['inline.yaml:7:40: rules.0.then.0: a timer (after:) needs then: [actions to run when it fires]'],
    ],
    [
      'then without a timer',
      `rules:\n  - { name: r, on: message_in, then: [ { note: hi, unless: agent_reply } ] }\n`,
      ['inline.yaml:7:40: rules.0.then.0: unless:, clock: and then: belong to a timer: add after: DURATION'],
    ],
    [
      'a reply with both text and media',
      `rules:\n  - { name: r, on: message_in, then: [ { reply: { text: hi, media: { url: "https://x.example/a.png", type: image } } } ] }\n`,
      ['inline.yaml:7:49: rules.0.then.0.reply: a reply needs exactly one of text or media'],
    ],
    [
      'an empty condition',
      `rules:\n  - { name: r, on: message_in, if: {}, then: [ { need_human: true } ] }\n`,
      [
        'inline.yaml:7:36: rules.0.if: a condition needs at least one test: engine, channel_id, channel_name, sender, content_type, has_media, need_human, text, business_hours, first_message, tags, all, any, not',
      ],
    ],
    [
      'a keyword without letters',
      `rules:\n  - { name: r, on: message_in, if: { text: { any_keywords: [ "!!" ] } }, then: [ { need_human: true } ] }\n`,
      ['inline.yaml:7:62: rules.0.if.text.any_keywords.0: a keyword needs at least one letter or digit'],
    ],
  ])('%s', (_name, extra, expected) => {
    expect(problems(`${MINIMAL}${extra}`)).toEqual(expected);
  });
});

describe('every problem at once: template typos next to structural errors (issue 13)', () => {
  it('reports {{customer.nmae}} in a rule and in when_closed while the schema also fails', () => {
    const found = problems(`platform:
  base_url: https://api.example.com
  form: newest
  auth: { scheme: headers, business_id: b, secret: s }
receiver: { secrets: [ w ] }
reply_window:
  when_closed: [ { note: "closed {{window.closed_fr}}" } ]
rules:
  - name: hi
    on: message_in
    then:
      - note: "Hi {{customer.nmae}}"
      - after: 5m
        then: [ { reply: { text: "later {{event.txt}}" } } ]
`);
    expect(found).toEqual([
      expect.stringMatching(/^inline\.yaml:3:9: platform\.form: must be one of current, earlier/),
      expect.stringMatching(
        /^inline\.yaml:7:\d+: reply_window\.when_closed\.0\.note: unknown template variable \{\{window\.closed_fr\}\}/,
      ),
      expect.stringMatching(
        /^inline\.yaml:12:\d+: rules\.0\.then\.0\.note: unknown template variable \{\{customer\.nmae\}\}/,
      ),
      expect.stringMatching(
        /^inline\.yaml:14:\d+: rules\.0\.then\.1\.then\.0\.reply\.text: unknown template variable \{\{event\.txt\}\}/,
      ),
    ]);
  });
});
