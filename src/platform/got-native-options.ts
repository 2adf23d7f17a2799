import { createHash } from 'node:crypto';
import type { ClientRequest, RequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkServerIdentity } from 'node:tls';
import { Options } from 'got';

/**
 * got 14 builds Node's request options for every request in `Options#createNativeRequestOptions`
 * with one object literal that starts with two spreads (`...cacheOptions, ...unixOptions`) and then
 * names 34 properties. On Node 20's V8 every property defined after a spread in a literal takes a
 * slow path, so that one literal cost about 25 us per request (measured: a third of got's own CPU
 * per call, bench/transport-cost.ts), and each result got a hidden class of its own, which made
 * Node's ClientRequest and Agent code that reads it megamorphic too.
 *
 * `fastNativeRequestOptions` builds the same object (the same keys with the same values; pinned by
 * test/unit/platform/got-native-options.test.ts for http, https with TLS options, unix sockets and
 * cache options) from a plain literal and adds the spread parts after it. It replaces got's method
 * only when that method's source is the exact one it was written against (GOT_METHOD_SHA256): a
 * got upgrade that changes the method keeps got's own (correct, slower), and the unit test says so.
 */
export const GOT_METHOD_SHA256 = 'b9f570eece4d7faeebfb8b84b6e5bf97e2ed57821499631309c998f45a5b442f';

/** got's `https` options, as far as the native options read them. */
type GotHttps = {
  [K in
    | 'alpnProtocols'
    | 'certificateAuthority'
    | 'certificate'
    | 'key'
    | 'passphrase'
    | 'pfx'
    | 'rejectUnauthorized'
    | 'checkServerIdentity'
    | 'serverName'
    | 'ciphers'
    | 'honorCipherOrder'
    | 'minVersion'
    | 'maxVersion'
    | 'signatureAlgorithms'
    | 'tlsSessionLifetime'
    | 'dhparam'
    | 'ecdhCurve'
    | 'certificateRevocationLists'
    | 'secureOptions']?: unknown;
};

interface GotInternals {
  url: URL;
  agent: { http?: unknown; https?: unknown; http2?: unknown };
  http2: boolean;
  https: GotHttps;
  cacheOptions: Record<string, unknown>;
  dnsLookup?: unknown;
  dnsCache?: { lookup?: unknown };
  dnsLookupIpVersion?: unknown;
  setHost?: unknown;
  method?: unknown;
  maxHeaderSize?: unknown;
  localAddress?: unknown;
  headers?: unknown;
  createConnection?: unknown;
  h2session?: unknown;
}

interface GotOptionsShape {
  _internals: GotInternals;
  _unixOptions?: Record<string, unknown>;
}

type NativeOptionsMethod = (this: GotOptionsShape) => Record<string, unknown>;

export function fastNativeRequestOptions(this: GotOptionsShape): Record<string, unknown> {
  const internals = this._internals;
  const secure = internals.url.protocol === 'https:';
  // got's HTTP/2 branch (never used by this project) stays got's own.
  if (secure && internals.http2) return gotOwnNativeRequestOptions().call(this);
  const https = internals.https;
  const native: Record<string, unknown> = {
    ALPNProtocols: https.alpnProtocols,
    ca: https.certificateAuthority,
    cert: https.certificate,
    key: https.key,
    passphrase: https.passphrase,
    pfx: https.pfx,
    rejectUnauthorized: https.rejectUnauthorized,
    checkServerIdentity: https.checkServerIdentity ?? checkServerIdentity,
    servername: https.serverName,
    ciphers: https.ciphers,
    honorCipherOrder: https.honorCipherOrder,
    minVersion: https.minVersion,
    maxVersion: https.maxVersion,
    sigalgs: https.signatureAlgorithms,
    sessionTimeout: https.tlsSessionLifetime,
    dhparam: https.dhparam,
    ecdhCurve: https.ecdhCurve,
    crl: https.certificateRevocationLists,
    secureOptions: https.secureOptions,
    lookup: internals.dnsLookup ?? internals.dnsCache?.lookup,
    family: internals.dnsLookupIpVersion,
    agent: secure ? internals.agent.https : internals.agent.http,
    setHost: internals.setHost,
    method: internals.method,
    maxHeaderSize: internals.maxHeaderSize,
    localAddress: internals.localAddress,
    headers: internals.headers,
    createConnection: internals.createConnection,
    timeout: undefined,
    h2session: internals.h2session,
  };
  // None of these keys is one of the names above (cache: shared, cacheHeuristic,
  // immutableMinTimeToLive, ignoreCargoCult; unix: socketPath, path, host), so adding them after
  // the literal gives the same object as got's spread-first literal.
  Object.assign(native, internals.cacheOptions, this._unixOptions);
  return native;
}

let original: NativeOptionsMethod | undefined;

/** The sha256 of a function's source text. */
export function sourceSha256(fn: (...args: never[]) => unknown): string {
  return createHash('sha256').update(fn.toString()).digest('hex');
}

/** got's own method, as it was before install (for the equivalence test). */
export function gotOwnNativeRequestOptions(): NativeOptionsMethod {
  return (
    original ??
    (Options.prototype as unknown as { createNativeRequestOptions: NativeOptionsMethod })
      .createNativeRequestOptions
  );
}

/** Installs the fast method once, if got's is the one it was checked against. Returns whether it is in place. */
export function installFastNativeOptions(): boolean {
  const proto = Options.prototype as unknown as { createNativeRequestOptions: NativeOptionsMethod };
  if (proto.createNativeRequestOptions === fastNativeRequestOptions) return true;
  if (sourceSha256(proto.createNativeRequestOptions) !== GOT_METHOD_SHA256) return false;
  original = proto.createNativeRequestOptions;
  proto.createNativeRequestOptions = fastNativeRequestOptions;
  return true;
}

/**
 * got's `request` option: Node's `http(s).request` given only the options that are set. got hands
 * over all 34 names, most of them undefined, and Node copies and walks every one of them twice per
 * request (ClientRequest, Agent#addRequest); leaving out the undefined ones changes nothing Node
 * reads and saves about 10 us per call (bench/transport-cost.ts).
 */
export function definedOnlyRequest(url: URL, options: object): ClientRequest {
  const given = options as Record<string, unknown>;
  const defined: Record<string, unknown> = {};
  for (const key in given) if (given[key] !== undefined) defined[key] = given[key];
  return (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, defined as RequestOptions);
}
