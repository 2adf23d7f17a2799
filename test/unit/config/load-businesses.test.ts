import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BusinessesDirListing } from '../../../src/config/businesses-dir.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { type LoadOptions, loadConfig, parseConfigText } from '../../../src/config/load-config.js';
import { SINGLE_BUSINESS_NAMING } from '../../../src/events/business-naming.js';
import { cpuMs } from '../../support/cpu-time.js';

/**
 * Many businesses (issue 26): the merge, where each problem is reported, and every refusal with
 * its message and position. Files of businesses_dir come from a reader that holds them in memory.
 */

type Files = Record<string, string>;

function fakeDir(files: Files | BusinessesDirListing | undefined) {
  return (dir: string): BusinessesDirListing => {
    if (files === undefined) return { ok: false, dir, code: 'ENOENT' };
    if ('ok' in files && typeof files.ok === 'boolean') return files as BusinessesDirListing;
    const entries = Object.entries(files as Files);
    return { ok: true, dir, files: entries.map(([name, text]) => ({ name, path: join(dir, name), text })) };
  };
}

function load(text: string, files?: Files, options: LoadOptions = {}) {
  return parseConfigText(text, {
    fileName: 'bridge.yaml',
    env: {},
    readBusinessesDir: fakeDir(files),
    ...options,
  });
}

function problemsOf(text: string, files?: Files, options: LoadOptions = {}): string[] {
  try {
    load(text, files, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const issue of error.issues) expect(error.message).toContain(formatConfigIssue(issue));
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the config loaded, but it should not have');
}

const business = (id: string) =>
  `platform: { base_url: https://${id}.example.com, auth: { business_id: ${id}, secret: secret-${id} } }\n`;

describe('a config with businesses', () => {
  it('loads the fixture: three businesses in order, each the top level with its own settings over it', async () => {
    const loaded = await loadConfig('test/fixtures/config/businesses/bridge.yaml', { env: {} });
    const [a, b, c] = loaded.businesses;
    expect(loaded.businesses.map((x) => [x.id, x.naming.keyScope, `${x.file}:${x.line}`])).toEqual([
      ['toko-a', ':b:toko-a', 'test/fixtures/config/businesses/bridge.yaml:21'],
      ['toko-b', ':b:toko-b', 'test/fixtures/config/businesses/bridge.yaml:26'],
      ['toko-c', ':b:toko-c', `${join('test/fixtures/config/businesses/dir/toko-c.yaml')}:2`],
    ]);
    expect(loaded.written).toBe('businesses');
    // LoadedConfig.config and .rules are the first business's, for callers that know no businesses.
    expect(loaded.config).toBe(a?.config);
    expect(loaded.rules).toBe(a?.rules);

    expect(a?.config.platform).toMatchObject({
      baseUrl: 'https://api.toko-a.example.com',
      form: 'current',
      timeoutMs: 5_000,
      auth: { scheme: 'headers', businessId: 'biz_a', secret: 'secret-a' },
    });
    expect(a?.config.receiver).toMatchObject({
      port: 8080,
      path: '/webhooks/toko-a',
      secrets: ['webhook-a'],
    });
    expect(a?.config.rules.map((r) => r.name)).toEqual(['escalate', 'after-hours']);
    expect(a?.overrides).toEqual(['platform', 'receiver']);

    expect(b?.config.platform).toMatchObject({
      form: 'earlier',
      auth: { scheme: 'bearer-secret' },
      timeoutMs: 5_000,
    });
    // Without receiver.secrets, a business accepts its own platform Secret Key.
    expect(b?.config.receiver).toMatchObject({
      path: '/hooks/toko-b',
      secrets: ['secret-b'],
      secretsDefaulted: true,
    });
    expect(b?.config.businessHours?.weekly).toEqual({ 'sat-sun': '10:00-14:00' });
    expect(b?.config.rules.map((r) => r.name)).toEqual(['catalog']);

    expect(Object.keys(c?.config.destinations ?? {})).toEqual(['crm', 'helpdesk']);
    expect(c?.config.receiver.path).toBe('/webhooks/toko-c');
    expect(c?.config.redis).toBe(c?.config.redis);
    expect(loaded.businesses.map((x) => x.config.redis.prefix)).toEqual(['cb', 'cb', 'cb']);
  });

  it('compiles the rules once for businesses that share them and the settings they use', () => {
    const files = Object.fromEntries(['b1', 'b2', 'b3'].map((id) => [`${id}.yaml`, business(id)]));
    files['b4.yaml'] = `${business('b4')}timezone: Asia/Makassar\n`;
    const loaded = load(
      'platform: { form: current }\nbusinesses_dir: businesses\nrules:\n  - { name: r, on: message_in, then: [ { note: hi } ] }\n',
      files,
    );
    const [b1, b2, b3, b4] = loaded.businesses;
    expect(b2?.rules).toBe(b1?.rules);
    expect(b3?.rules).toBe(b1?.rules);
    expect(b4?.rules).not.toBe(b1?.rules);
    expect(b4?.rules.timezone).toBe('Asia/Makassar');
  });

  it('loads 200 businesses of businesses_dir quickly', () => {
    const files = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`b${String(i).padStart(3, '0')}.yaml`, business(`b${i}`)]),
    );
    const top = `platform: { form: current }\nbusinesses_dir: businesses\nrules:\n${Array.from(
      { length: 20 },
      (_, i) =>
        `  - { name: r${i}, on: message_in, if: { text: { any_keywords: [ k${i} ] } }, then: [ { note: hi } ] }\n`,
    ).join('')}`;
    load(top, files); // warm up
    const started = cpuMs();
    const loaded = load(top, files);
    const ms = cpuMs() - started;
    expect(loaded.businesses).toHaveLength(200);
    expect(new Set(loaded.businesses.map((b) => b.rules)).size).toBe(1);
    // About 80 ms on the 2-core development machine; the bound leaves room for a busy CI.
    expect(ms).toBeLessThan(1_000);
  });

  it('is one implicit business, "default", without businesses: exactly as before', () => {
    const loaded = load(
      'platform: { base_url: https://x.example.com, auth: { business_id: b, secret: s } }\nreceiver: {}\n',
    );
    expect(loaded.businesses).toEqual([
      {
        id: 'default',
        naming: SINGLE_BUSINESS_NAMING,
        config: loaded.config,
        rules: loaded.rules,
        file: 'bridge.yaml',
        line: 1,
      },
    ]);
    expect(loaded.config.receiver.path).toBe('/webhooks/platform');
  });

  it('lists the unset variables of business files with their file', () => {
    const loaded = load(
      'platform: { form: current }\nbusinesses_dir: businesses\n',
      {
        'toko-a.yaml':
          'platform: { base_url: https://a.example.com, auth: { business_id: a, secret: "${SECRET_A}" } }\n',
      },
      { allowMissingEnv: true },
    );
    expect(loaded.missingEnv.map((m) => `${m.file}:${m.line}:${m.column} ${m.name}`)).toEqual([
      `${join('businesses', 'toko-a.yaml')}:1:79 SECRET_A`,
    ]);
  });
});

/** A row: what is wrong, the config, the files of businesses_dir (if any), and every problem reported. */
type Row = [string, string, Files | undefined, string[]];

const TOP = 'platform: { form: current }\nreceiver: { port: 8080 }\n';
const A =
  '  - id: toko-a\n    platform: { base_url: https://a.example.com, auth: { business_id: biz_a, secret: sa } }\n';
const B =
  '  - id: toko-b\n    platform: { base_url: https://b.example.com, auth: { business_id: biz_b, secret: sb } }\n';

const REFUSALS: Row[] = [
  [
    'an id that is not [a-z0-9-]',
    `${TOP}businesses:\n${A}${B.replace('toko-b', 'Toko_B')}`,
    undefined,
    [
      'bridge.yaml:6:9: id: "Toko_B" is not a valid business id: use 1 to 40 lowercase letters, digits and -, not starting or ending with - (the id is used in Redis keys, metrics and --business)',
    ],
  ],
  [
    'an id that ends with -',
    `${TOP}businesses:\n${A}${B.replace('toko-b', 'toko-')}`,
    undefined,
    [
      'bridge.yaml:6:9: id: "toko-" is not a valid business id: use 1 to 40 lowercase letters, digits and -, not starting or ending with - (the id is used in Redis keys, metrics and --business)',
    ],
  ],
  [
    'an id of 41 characters',
    `${TOP}businesses:\n${A}${B.replace('toko-b', 'a'.repeat(41))}`,
    undefined,
    [
      'bridge.yaml:6:9: id: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" is not a valid business id: use 1 to 40 lowercase letters, digits and -, not starting or ending with - (the id is used in Redis keys, metrics and --business)',
    ],
  ],
  [
    'an entry without id',
    `${TOP}businesses:\n${A}${B.replace('  - id: toko-b\n    platform', '  - platform')}`,
    undefined,
    [
      'bridge.yaml:6:5: businesses.1: id is required: name the business with 1 to 40 lowercase letters, digits and -, not starting or ending with -, e.g. id: toko-a',
    ],
  ],
  [
    'an id that is a number',
    `${TOP}businesses:\n${A}${B.replace('toko-b', '123')}`,
    undefined,
    [
      'bridge.yaml:6:9: id: expected a string of 1 to 40 lowercase letters, digits and -, not starting or ending with -, got a number; to use it as it is, quote it: id: "123"',
    ],
  ],
  [
    'an entry that is not a mapping',
    `${TOP}businesses:\n${A}  - toko-b\n`,
    undefined,
    [
      'bridge.yaml:6:5: businesses.1: a business is a mapping of its settings (id:, platform:, receiver:, rules: ...), got a string',
    ],
  ],
  [
    'two businesses with one id',
    `${TOP}businesses:\n${A}${B.replace('toko-b', 'toko-a')}`,
    undefined,
    [
      'bridge.yaml:6:9: business id "toko-a" is used twice (also at bridge.yaml:4:9): give each business its own id',
    ],
  ],
  [
    'two businesses that take over the single business',
    `${TOP}businesses:\n${A.replace('  - id: toko-a\n', '  - id: toko-a\n    takes_over: default\n')}${B.replace('  - id: toko-b\n', '  - id: toko-b\n    takes_over: default\n')}`,
    undefined,
    [
      'bridge.yaml:8:17: business "toko-b": takes_over: default is said by 2 businesses (toko-a, toko-b); only one business can keep the data of a config without businesses: keep takes_over on the business that was the single business (same platform credentials and webhook), remove it from the others',
    ],
  ],
  [
    'takes_over naming anything but default',
    `${TOP}businesses:\n${A.replace('  - id: toko-a\n', '  - id: toko-a\n    takes_over: toko-x\n')}${B}`,
    undefined,
    [
      'bridge.yaml:5:17: business "toko-a": takes_over: expected default (the data of a config without businesses:, the only data a business can take over), got "toko-x": write takes_over: default, or remove it',
    ],
  ],
  [
    'an id in the list and a file of the same name',
    `${TOP}businesses:\n${A}businesses_dir: businesses\n`,
    { 'toko-a.yaml': business('toko-x') },
    [
      'businesses/toko-a.yaml:1:1: business id "toko-a" is used twice (also at bridge.yaml:4:9): give each business its own id',
    ],
  ],
  [
    'two businesses with one webhook path',
    `${TOP}businesses:\n${A}${B}    receiver: { path: /webhooks/toko-a }\n`,
    undefined,
    [
      'bridge.yaml:8:23: business "toko-b": its webhook path /webhooks/toko-a is also the path of business "toko-a" (bridge.yaml:4:9): give each business its own receiver.path',
    ],
  ],
  [
    'webhook paths that differ only in case and a trailing /',
    `${TOP}businesses:\n${A}    receiver: { path: /hooks/A }\n${B}    receiver: { path: /hooks/a/ }\n`,
    undefined,
    [
      'bridge.yaml:9:23: business "toko-b": its webhook path /hooks/a/ is also the path of business "toko-a" (bridge.yaml:6:23): give each business its own receiver.path',
    ],
  ],
  [
    'one webhook secret listed by two businesses',
    `${TOP}businesses:\n${A}    receiver: { secrets: [ w1, shared ] }\n${B}    receiver: { secrets: [ shared ] }\n`,
    undefined,
    [
      'bridge.yaml:6:32: the same webhook secret is accepted by businesses toko-a (bridge.yaml:6:32), toko-b (bridge.yaml:9:28): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets',
      'bridge.yaml:9:28: the same webhook secret is accepted by businesses toko-a (bridge.yaml:6:32), toko-b (bridge.yaml:9:28): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets',
    ],
  ],
  [
    'two businesses with one platform secret and no receiver.secrets',
    `${TOP}businesses:\n${A}${B.replace('secret: sb', 'secret: sa')}`,
    undefined,
    [
      'bridge.yaml:5:86: the same webhook secret is accepted by businesses toko-a (bridge.yaml:5:86), toko-b (bridge.yaml:7:86): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets',
      'bridge.yaml:7:86: the same webhook secret is accepted by businesses toko-a (bridge.yaml:5:86), toko-b (bridge.yaml:7:86): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets',
    ],
  ],
  [
    'a platform secret at the top level that businesses inherit',
    `platform: { form: current, auth: { secret: shared } }\nbusinesses:\n  - id: toko-a\n    platform: { base_url: https://a.example.com, auth: { business_id: biz_a } }\n  - id: toko-b\n    platform: { base_url: https://b.example.com, auth: { business_id: biz_b } }\n`,
    undefined,
    [
      'bridge.yaml:1:44: the same webhook secret is accepted by businesses toko-a, toko-b (bridge.yaml:1:44): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets',
    ],
  ],
  [
    'an empty businesses list',
    `${TOP}businesses: []\n`,
    undefined,
    [
      'bridge.yaml:3:13: businesses: the list is empty: list at least one business (- id: toko-a ...), or remove businesses: to run one business from the top-level settings',
    ],
  ],
  [
    'businesses: with nothing',
    `${TOP}businesses:\n`,
    undefined,
    [
      'bridge.yaml:3:12: businesses: the list is empty: list at least one business (- id: toko-a ...), or remove businesses: to run one business from the top-level settings',
    ],
  ],
  [
    'businesses that is a mapping',
    `${TOP}businesses:\n  toko-a: { platform: {} }\n`,
    undefined,
    ['bridge.yaml:4:3: businesses: expected a list of businesses (- id: toko-a ...), got a mapping'],
  ],
  [
    'a shared section in a business',
    `${TOP}businesses:\n${A}    redis: { url: redis://x:6379 }\n    worker: { concurrency: 4 }\n    tracing: {}\n`,
    undefined,
    [
      'bridge.yaml:6:5: business "toko-a": redis is shared by all businesses and belongs at the top level: move it there',
      'bridge.yaml:7:5: business "toko-a": worker is shared by all businesses and belongs at the top level: move it there',
      'bridge.yaml:8:5: business "toko-a": tracing is shared by all businesses and belongs at the top level: move it there',
    ],
  ],
  [
    'a shared receiver key in a business',
    `${TOP}businesses:\n${A}    receiver: { path: /a, port: 9090, body_limit: 2mb }\n`,
    undefined,
    [
      'bridge.yaml:6:27: business "toko-a": receiver.port is shared by all businesses and belongs at the top level (one receiver serves them all); a business sets only receiver.path and receiver.secrets',
      'bridge.yaml:6:39: business "toko-a": receiver.body_limit is shared by all businesses and belongs at the top level (one receiver serves them all); a business sets only receiver.path and receiver.secrets',
    ],
  ],
  [
    'an unknown key in a business',
    `${TOP}businesses:\n${A}    rulez: []\n    receiver: { secret: [ x ] }\n`,
    undefined,
    [
      'bridge.yaml:6:5: business "toko-a": unknown key "rulez": did you mean "rules"?',
      'bridge.yaml:7:17: business "toko-a": receiver: unknown key "secret": did you mean "secrets"?',
    ],
  ],
  [
    'the webhook path or secrets at the top level',
    `platform: { form: current }\nreceiver: { port: 8080, path: /webhooks/platform, secrets: [ w ] }\nbusinesses:\n${A}`,
    undefined,
    [
      'bridge.yaml:2:25: receiver.path: with businesses, each business has its own webhook path (/webhooks/<id>, or the receiver.path it sets): move this into a business, or remove it',
      'bridge.yaml:2:51: receiver.secrets: with businesses, each business has its own webhook secrets (the receiver.secrets it sets, else its platform.auth.secret): move these into the businesses, or remove them',
    ],
  ],
  [
    'a value the business wrote',
    `${TOP}businesses:\n${A.replace('https://a.example.com', 'a.example.com')}${B}`,
    undefined,
    [
      'bridge.yaml:5:27: business "toko-a": platform.base_url: must be an http:// or https:// URL, e.g. https://api.example.com',
    ],
  ],
  [
    'a value every business inherits, once',
    `platform: { form: current, timeout: 10 seconds }\nbusinesses:\n${A}${B}`,
    undefined,
    [
      'bridge.yaml:1:37: platform.timeout: expected a duration such as 500ms, 15s, 15m, 12h or 7d, got "10 seconds"',
    ],
  ],
  [
    'a value some businesses inherit, naming them',
    `${TOP}rules:\n  - { name: r, on: message_in, then: [ { forward: crm } ] }\nbusinesses:\n${A}    destinations: { crm: { url: https://crm.example.com } }\n${B}`,
    undefined,
    [
      'bridge.yaml:4:51: rules.0.then.0.forward: unknown destination "crm": define it under destinations: (in business toko-b)',
    ],
  ],
  [
    'a required key one business misses',
    `${TOP}businesses:\n${A}  - id: toko-b\n    platform: { auth: { business_id: biz_b, secret: sb } }\n`,
    undefined,
    ['bridge.yaml:7:15: business "toko-b": platform.base_url: is required (a string)'],
  ],
  [
    'a required key every business misses, once at the top level',
    `${TOP}destinations: { crm: { secret: s } }\nbusinesses:\n${A}${B}`,
    undefined,
    ['bridge.yaml:3:22: destinations.crm.url: is required (a string)'],
  ],
  [
    'a business file whose id is not its name',
    `${TOP}businesses_dir: businesses\n`,
    { 'toko-a.yaml': `id: toko-x\n${business('toko-a')}` },
    [
      'businesses/toko-a.yaml:1:5: id: "toko-x" does not match the file name "toko-a.yaml": rename one to match the other, or remove id: to take the file\'s name',
    ],
  ],
  [
    'a business file whose name is no id',
    `${TOP}businesses_dir: businesses\n`,
    { 'Toko A.yaml': business('toko-a') },
    [
      'businesses/Toko A.yaml:1:1: the file name "Toko A.yaml" does not make a business id (1 to 40 lowercase letters, digits and -, not starting or ending with -): rename the file, or write an id: in it',
    ],
  ],
  [
    'a problem in a business file, at its line and column',
    `${TOP}businesses_dir: businesses\n`,
    { 'toko-a.yaml': `${business('toko-a')}timezone: Mars/Olympus\nredis: {}\n` },
    [
      'businesses/toko-a.yaml:2:11: business "toko-a": timezone: unknown time zone: use an IANA name such as Asia/Jakarta',
      'businesses/toko-a.yaml:3:1: business "toko-a": redis is shared by all businesses and belongs at the top level: move it there',
    ],
  ],
  [
    'a business file that is not YAML',
    `${TOP}businesses_dir: businesses\n`,
    { 'toko-a.yaml': 'platform: [\n' },
    [
      'businesses/toko-a.yaml:2:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
  ],
  [
    'an empty business file',
    `${TOP}businesses_dir: businesses\n`,
    { 'toko-a.yaml': '# nothing yet\n' },
    [
      'businesses/toko-a.yaml:1:1: the business file is empty: write the settings of this business (platform:, receiver:, rules: ...)',
    ],
  ],
  [
    'a business file that is a list',
    `${TOP}businesses_dir: businesses\n`,
    { 'toko-a.yaml': '- id: toko-a\n' },
    [
      'businesses/toko-a.yaml:1:1: a business file must be a mapping of its settings (id:, platform:, receiver:, rules: ...), got a list',
    ],
  ],
  [
    'a businesses_dir that does not exist',
    `${TOP}businesses_dir: businesses\n`,
    undefined,
    [
      "bridge.yaml:3:17: businesses_dir: the directory businesses does not exist (businesses_dir is relative to the config file's directory): create it, or correct the path",
    ],
  ],
  [
    'a businesses_dir without business files',
    `${TOP}businesses_dir: businesses\n`,
    {},
    [
      'bridge.yaml:3:17: businesses_dir: businesses holds no business file: add one *.yaml file per business (its name is the business id unless it has id:)',
    ],
  ],
  [
    "the config file's own directory as businesses_dir",
    `${TOP}businesses_dir: .\n`,
    {},
    [
      "bridge.yaml:3:17: businesses_dir: it is the config file's own directory, but every YAML file in businesses_dir is a business: give the businesses a directory of their own, e.g. businesses/",
    ],
  ],
  [
    'a businesses_dir that is not a string',
    `${TOP}businesses_dir: [ a ]\n`,
    {},
    [
      "bridge.yaml:3:17: businesses_dir: expected a directory (relative to the config file's), e.g. businesses/, got a list",
    ],
  ],
];

REFUSALS.push([
  'a business file over 1 MiB',
  `${TOP}businesses_dir: businesses\n`,
  { 'toko-a.yaml': `# ${'x'.repeat(1024 * 1024)}\n` },
  [
    `${join('businesses', 'toko-a.yaml')}:1:1: the business file is 1.00 MiB, more than the 1 MiB a config may have: is this the right file? Remove unused rules or shorten keyword lists`,
  ],
]);

describe('refusals, each with its message and position', () => {
  it.each(REFUSALS)('%s', (_name, text, files, expected) => {
    expect(problemsOf(text, files)).toEqual(expected);
  });

  it('a business file nested too deeply, in that file (the column is where the stack ran out)', () => {
    const problems = problemsOf(`${TOP}businesses_dir: businesses\n`, {
      'toko-a.yaml': `rules: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^businesses\/toko-a\.yaml:1:\d+: the document is nested too deeply to read \(hundreds of levels of lists or mappings\): a config needs a few; flatten it$/,
    );
  });
});

describe('variables in businesses', () => {
  const text = `${TOP}businesses_dir: businesses\n`;
  const file = (extra = '') =>
    `platform: { base_url: "\${BASE_A}", auth: { business_id: biz_a, secret: "\${SECRET_A}" } }\n${extra}`;

  it('are resolved in business files, and an unset one is reported where it is written', () => {
    const loaded = load(
      text,
      { 'toko-a.yaml': file() },
      { env: { BASE_A: 'https://a.example.com', SECRET_A: 's' } },
    );
    expect(loaded.businesses[0]?.config.platform).toMatchObject({ baseUrl: 'https://a.example.com' });
    expect(problemsOf(text, { 'toko-a.yaml': file() }, { env: { SECRET_A: 's' } })).toEqual([
      `${join('businesses', 'toko-a.yaml')}:1:24: environment variable BASE_A is not set: set it, or write \${BASE_A:-default} to give a default`,
    ]);
  });

  it('get placeholders with allowMissingEnv, as in a config of one business', () => {
    const loaded = load(text, { 'toko-a.yaml': file() }, { allowMissingEnv: true });
    expect(loaded.businesses[0]?.config.platform.baseUrl).toBe('https://placeholder.invalid/');
    expect(loaded.missingEnv.map((m) => m.name)).toEqual(['BASE_A', 'SECRET_A']);
  });

  it("are the entry's own in businesses: (each entry gets its placeholders, the top level its own)", () => {
    const inline = `platform: { form: current, timeout: "\${TIMEOUT}" }\nbusinesses:\n  - id: toko-a\n    platform: { base_url: "\${BASE_A}", auth: { business_id: a, secret: "\${SECRET_A}" } }\n  - id: toko-b\n    platform: { base_url: https://b.example.com, auth: { business_id: b, secret: b } }\n`;
    const loaded = load(inline, undefined, { allowMissingEnv: true });
    expect(loaded.businesses.map((b) => [b.config.platform.baseUrl, b.config.platform.timeoutMs])).toEqual([
      ['https://placeholder.invalid/', 1000],
      ['https://b.example.com', 1000],
    ]);
    expect(
      problemsOf(inline, undefined, { env: { BASE_A: 'https://a.example.com', SECRET_A: 's' } }),
    ).toEqual([
      'bridge.yaml:1:38: environment variable TIMEOUT is not set: set it, or write ${TIMEOUT:-default} to give a default',
    ]);
  });

  it('never show the value of a secret-looking one, and never print a shared webhook secret', () => {
    const env = { BASE_A: 'https://a.example.com', SECRET_A: 'hunter2-secret' };
    const problems = problemsOf(text, { 'toko-a.yaml': file('timezone: "${SECRET_A}"\n') }, { env });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('timezone');
    expect(problems.join('\n')).not.toContain('hunter2');
    const shared = problemsOf(`${TOP}businesses:\n${A}${B.replace('secret: sb', 'secret: sa')}`);
    expect(shared.join('\n')).not.toMatch(/\bsa\b/);
  });
});

describe('a businesses_dir that cannot be read', () => {
  it.each([
    [
      'a file that cannot be read',
      { ok: false, dir: 'businesses', code: 'EACCES', file: join('businesses', 'toko-a.yaml') },
      `${join('businesses', 'toko-a.yaml')}:1:1: cannot read this business file (EACCES): check its permissions`,
    ],
    [
      'a file, not a directory',
      { ok: false, dir: 'businesses', code: 'ENOTDIR' },
      'bridge.yaml:3:17: businesses_dir: businesses is not a directory: businesses_dir names a directory of business files',
    ],
  ] as [string, BusinessesDirListing, string][])('%s', (_name, listing, expected) => {
    const text = `${TOP}businesses_dir: businesses\n`;
    expect(() =>
      parseConfigText(text, { fileName: 'bridge.yaml', env: {}, readBusinessesDir: () => listing }),
    ).toThrow(ConfigError);
    try {
      parseConfigText(text, { fileName: 'bridge.yaml', env: {}, readBusinessesDir: () => listing });
    } catch (error) {
      expect((error as ConfigError).issues.map(formatConfigIssue)).toEqual([expected]);
    }
  });
});
