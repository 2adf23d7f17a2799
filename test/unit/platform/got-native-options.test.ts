import { lookup } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Options } from 'got';
import { describe, expect, it } from 'vitest';
import {
  fastNativeRequestOptions,
  GOT_METHOD_SHA256,
  gotOwnNativeRequestOptions,
  installFastNativeOptions,
  sourceSha256,
} from '../../../src/platform/got-native-options.js';

type Native = Record<string, unknown>;

function both(options: Options): { got: Native; fast: Native } {
  const shape = options as unknown as ThisParameterType<typeof fastNativeRequestOptions>;
  return { got: gotOwnNativeRequestOptions().call(shape), fast: fastNativeRequestOptions.call(shape) };
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

describe('fastNativeRequestOptions', () => {
  it("replaces got's method only because it is the exact source it was written against", () => {
    // If this fails after a got upgrade: compare got's Options#createNativeRequestOptions with
    // fastNativeRequestOptions, mend the copy, then set GOT_METHOD_SHA256 to the value printed.
    expect(sourceSha256(gotOwnNativeRequestOptions())).toBe(GOT_METHOD_SHA256);
    expect(installFastNativeOptions()).toBe(true);
    expect(installFastNativeOptions()).toBe(true); // idempotent
    expect(
      (Options.prototype as unknown as { createNativeRequestOptions: unknown }).createNativeRequestOptions,
    ).toBe(fastNativeRequestOptions);
  });

  it.each<[string, string, ConstructorParameters<typeof Options>[1]]>([
    ['http, defaults', 'http://127.0.0.1:4000/v1/message', {}],
    [
      'http, what the platform client sets',
      'http://127.0.0.1:4000/v1/message',
      {
        method: 'POST',
        agent: agents,
        headers: { business: 'biz_1', secret: 's', 'content-type': 'application/json' },
        body: '{"a":1}',
        timeout: { request: 5000 },
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        decompress: false,
      },
    ],
    [
      'https with TLS options',
      'https://platform.example/v1/message?x=1',
      {
        agent: agents,
        https: {
          rejectUnauthorized: false,
          certificateAuthority: 'CA',
          certificate: 'CERT',
          key: 'KEY',
          passphrase: 'pw',
          serverName: 'sni.example',
          ciphers: 'TLS_AES_128_GCM_SHA256',
          honorCipherOrder: true,
          minVersion: 'TLSv1.2',
          maxVersion: 'TLSv1.3',
          alpnProtocols: ['http/1.1'],
          signatureAlgorithms: 'RSA-PSS+SHA256',
          tlsSessionLifetime: 60,
          ecdhCurve: 'auto',
          secureOptions: 4,
          checkServerIdentity: () => undefined,
        },
      },
    ],
    [
      'lookup, family, local address, host header, header size, cache options',
      'http://127.0.0.1:4000/',
      {
        dnsLookup: lookup,
        dnsLookupIpVersion: 4,
        localAddress: '127.0.0.1',
        setHost: false,
        maxHeaderSize: 32_768,
        cacheOptions: { shared: false, cacheHeuristic: 0.2 },
      },
    ],
    ['a unix socket', 'http://unix:/tmp/convo.sock:/v1/message', { enableUnixSockets: true }],
    ['HTTP/2 (left to got)', 'https://platform.example/', { http2: true }],
  ])('builds what got builds: %s', (_name, url, options) => {
    const { got, fast } = both(new Options(url, options));
    expect(Object.keys(fast).sort()).toEqual(Object.keys(got).sort());
    for (const key of Object.keys(got)) expect([key, fast[key]]).toEqual([key, got[key]]);
    // the values are the same objects, not copies (agents, headers, functions); got's HTTP/2
    // branch makes a new agent map per call, so there only equal values can be asked for
    if (options?.http2 !== true) {
      for (const key of Object.keys(got)) expect(Object.is(fast[key], got[key]), key).toBe(true);
    }
  });

  it('the unix socket case carries its socket path and path (the spread part)', () => {
    const { fast } = both(
      new Options('http://unix:/tmp/convo.sock:/v1/message', { enableUnixSockets: true }),
    );
    expect(fast).toMatchObject({ socketPath: '/tmp/convo.sock', path: '/v1/message', host: '' });
  });
});
