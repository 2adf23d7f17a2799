import { describe, expect, it } from 'vitest';
import { basicCredentials, matchesCredentials } from '../../../src/admin/admin-guard.js';
import { clientAddress } from '../../../src/admin/client-address.js';
import { adminSecurityHeaders, STRICT_CSP } from '../../../src/admin/security-headers.js';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('basic credentials', () => {
  it.each([
    ['no header', undefined, null],
    ['another scheme', 'Bearer abc', null],
    ['basic without a value', 'Basic', null],
    ['user and password', basic('ops:pa:ss'), { username: 'ops', password: 'pa:ss' }],
    [
      'the scheme in any case, spaces around',
      `  bAsIc   ${Buffer.from('ops:x').toString('base64')} `,
      { username: 'ops', password: 'x' },
    ],
    ['no colon: an attempt all the same', basic('ops'), { username: 'ops', password: '' }],
  ])('%s', (_name, header, expected) => {
    expect(basicCredentials(header)).toEqual(expected);
  });

  it('match only when both halves do', () => {
    const expected = { username: 'ops', password: 'correct-horse-battery' };
    expect(matchesCredentials({ username: 'ops', password: 'correct-horse-battery' }, expected)).toBe(true);
    expect(matchesCredentials({ username: 'ops', password: 'correct-horse-batter' }, expected)).toBe(false);
    expect(matchesCredentials({ username: 'op', password: 'correct-horse-battery' }, expected)).toBe(false);
    expect(matchesCredentials({ username: '', password: '' }, expected)).toBe(false);
  });
});

describe('the client address the throttle counts by', () => {
  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s -> %s', (remote, expected) => {
    expect(clientAddress(remote)).toBe(expected);
  });
});

describe('the security headers', () => {
  it("refuse framing by default, with frame-ancestors 'none' and X-Frame-Options", () => {
    const headers = adminSecurityHeaders(STRICT_CSP, []);
    expect(headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(headers).toMatchObject({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
  });

  it('let the configured origins frame, without X-Frame-Options (it cannot name them)', () => {
    const headers = adminSecurityHeaders(STRICT_CSP, [
      'https://ops.example.com',
      'https://grafana.example.com',
    ]);
    expect(headers['content-security-policy']).toContain(
      'frame-ancestors https://ops.example.com https://grafana.example.com',
    );
    expect(headers['x-frame-options']).toBeUndefined();
  });
});
