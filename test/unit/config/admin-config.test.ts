import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const HEAD =
  'platform:\n  base_url: https://api.example.com\n  auth: { business_id: b, secret: s }\nreceiver:\n  secrets: [ w ]\n';
const GOOD = 'correct-horse-battery';

function load(text: string, receiverHost?: string) {
  const head = receiverHost ? HEAD.replace('receiver:\n', `receiver:\n  host: "${receiverHost}"\n`) : HEAD;
  return parseConfigText(`${head}${text}`, { fileName: 'a.yaml', env: {} });
}

function problemsOf(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the config loaded, but it should not have');
}

const warningsOf = (text: string, receiverHost?: string) =>
  load(text, receiverHost).warnings.map(formatConfigIssue);

describe('admin: settings', () => {
  it('default to no admin surface, on the receiver port, framed by nobody', () => {
    expect(load('').config.admin).toEqual({
      username: 'admin',
      password: undefined,
      listen: null,
      frameAncestors: [],
      linkSecret: null,
    });
  });

  it('read listen as host and port (IPv6 in brackets) and frame_ancestors as origins', () => {
    const admin = load(
      `admin: { password: ${GOOD}, listen: "[::1]:9090", frame_ancestors: [ "https://ops.example.com" ] }\n`,
    ).config.admin;
    expect(admin).toMatchObject({
      listen: { host: '::1', port: 9090 },
      frameAncestors: ['https://ops.example.com'],
    });
    // A trailing slash is the same origin; the policy names the origin alone.
    expect(
      load(`admin: { password: ${GOOD}, frame_ancestors: [ "https://ops.example.com:8443/" ] }\n`).config
        .admin.frameAncestors,
    ).toEqual(['https://ops.example.com:8443']);
    expect(load(`admin: { password: ${GOOD}, listen: "127.0.0.1:9090" }\n`).config.admin.listen).toEqual({
      host: '127.0.0.1',
      port: 9090,
    });
  });

  it('refuse a password shorter than 12 characters, with the fix and without the password', () => {
    const problems = problemsOf('admin: { password: "s3cret-adm" }\n');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('admin.password');
    expect(problems[0]).toContain('is shorter than 12 characters');
    expect(problems[0]).toContain('openssl rand -base64 18');
    expect(problems[0]).not.toContain('s3cret-adm');
    expect(load('admin: { password: "twelve-chars" }\n').config.admin.password).toBe('twelve-chars');
  });

  it.each([
    ['9090', 'is not HOST:PORT'],
    ['127.0.0.1', 'is not HOST:PORT'],
    ['127.0.0.1:99999', 'is not HOST:PORT'],
    ['::1:9090', 'is not HOST:PORT'],
    ['http://127.0.0.1:9090', 'is not HOST:PORT'],
  ])('refuse listen: %s', (listen, message) => {
    const problems = problemsOf(`admin: { password: ${GOOD}, listen: "${listen}" }\n`);
    expect(problems.join('\n')).toContain(`admin.listen`);
    expect(problems.join('\n')).toContain(message);
    expect(problems.join('\n')).toContain('127.0.0.1:9090');
  });

  it.each([['https://ops.example.com/path'], ['ops.example.com'], ['javascript:alert(1)']])(
    'refuse frame_ancestors: %s',
    (origin) => {
      expect(
        problemsOf(`admin: { password: ${GOOD}, frame_ancestors: [ "${origin}" ] }\n`).join('\n'),
      ).toContain('is not an origin');
    },
  );
});

describe('admin: the warning about the webhook port', () => {
  const warning =
    /the admin surface \(\/admin\/queues\) shares the webhook port.*set admin\.listen: 127\.0\.0\.1:9090/;

  it.each([['0.0.0.0'], ['::']])('is given when the surface shares a receiver on %s', (host) => {
    const warnings = warningsOf(`admin: { password: ${GOOD} }\n`, host);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(warning);
  });

  it.each([
    [
      'admin.listen on its own address',
      `admin: { password: ${GOOD}, listen: "127.0.0.1:9090" }\n`,
      '0.0.0.0',
    ],
    ['a receiver on loopback', `admin: { password: ${GOOD} }\n`, '127.0.0.1'],
    ['no admin password (no admin surface)', '', '0.0.0.0'],
  ])('is not given with %s', (_name, text, host) => {
    expect(warningsOf(text, host).join('\n')).not.toMatch(warning);
  });
});
