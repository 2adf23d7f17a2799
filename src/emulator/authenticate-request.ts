import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiForm } from './channels.js';

/**
 * Platform authentication (messaging-service-interface.md, "Authentication"). Pure: headers in,
 * verdict out. Which forms each interface form accepts is the emulator's reading of the table:
 *   current form: `Business` + `Secret` headers, or `Authorization: Bearer base64(business_id:secret)`;
 *   earlier form: `Authorization: Bearer <secret>`;
 *   both forms, on the history call only: also `merchant_id` + `secret_key` headers (the earlier
 *   form by the interface's remark; the current form as the live service does).
 * `reason` goes to the request log; it never contains a secret.
 */
export interface PlatformCredentials {
  readonly businessId: string;
  readonly secret: string;
}

export type AuthScheme = 'business-headers' | 'encoded-bearer' | 'plain-bearer' | 'merchant-headers';

export type AuthVerdict =
  | { readonly ok: true; readonly scheme: AuthScheme }
  | { readonly ok: false; readonly reason: string };

export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface AuthenticateOptions {
  /** The history call (of either form) also takes `merchant_id` and `secret_key`. */
  readonly allowMerchantHeaders: boolean;
}

export function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  const first = typeof value === 'string' ? value : value?.[0];
  return first === undefined ? undefined : first.trim();
}

/** Constant-time string comparison (hashing first makes the lengths equal). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The token of `Bearer <token>`; undefined for anything else, including `Bearer` without a space. */
export function bearerToken(authorization: string): string | undefined {
  const match = /^bearer +(\S+)$/i.exec(authorization);
  return match?.[1];
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function decodeBusinessBearer(token: string): { businessId: string; secret: string } | undefined {
  if (!BASE64.test(token)) return undefined;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { businessId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** `Authorization: Bearer base64(business_id:secret)`, the current form's encoded bearer. */
function checkEncodedBearer(authorization: string, expected: PlatformCredentials): AuthVerdict {
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: 'malformed Authorization header' };
  const decoded = decodeBusinessBearer(token);
  if (!decoded) return { ok: false, reason: 'bearer is not base64 of business_id:secret' };
  if (decoded.businessId !== expected.businessId)
    return { ok: false, reason: 'unknown business id in bearer' };
  if (!sameSecret(decoded.secret, expected.secret)) return { ok: false, reason: 'wrong secret in bearer' };
  return { ok: true, scheme: 'encoded-bearer' };
}

export function authenticateRequest(
  form: ApiForm,
  headers: HeaderBag,
  expected: PlatformCredentials,
  options: AuthenticateOptions,
): AuthVerdict {
  const authorization = header(headers, 'authorization');
  if (form === 'current') return authenticateCurrent(headers, authorization, expected, options);

  const merchant = options.allowMerchantHeaders
    ? checkMerchantHeaders(headers, expected, authorization !== undefined)
    : undefined;
  if (merchant && (!merchant.ok || authorization === undefined)) return merchant;
  // Beside merchant headers, the bearer is checked as well.
  if (authorization === undefined) return { ok: false, reason: 'no credentials' };
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: 'malformed Authorization header' };
  if (!sameSecret(token, expected.secret)) return { ok: false, reason: 'wrong secret in bearer' };
  return { ok: true, scheme: 'plain-bearer' };
}

/**
 * The current form: `Business` + `Secret`, or the encoded bearer; on the history call also
 * `merchant_id` + `secret_key` (the interface ties them to the earlier form's
 * history, but the live service takes them on the current form's from a public third-party client,
 * whose history call sends nothing else; docs/conformance.md, "Ambiguous readings").
 */
function authenticateCurrent(
  headers: HeaderBag,
  authorization: string | undefined,
  expected: PlatformCredentials,
  options: AuthenticateOptions,
): AuthVerdict {
  const business = header(headers, 'business');
  const secret = header(headers, 'secret');
  const separate = business !== undefined || secret !== undefined;
  let verdict: AuthVerdict | undefined;
  if (separate) {
    if (business === undefined || secret === undefined) {
      return { ok: false, reason: 'Business and Secret headers must be sent together' };
    }
    if (business !== expected.businessId) return { ok: false, reason: 'unknown Business id' };
    if (!sameSecret(secret, expected.secret)) return { ok: false, reason: 'wrong Secret' };
    // Every credential presented must be right, in both forms (the earlier form's
    // merchant headers already work so): an Authorization beside valid Business + Secret headers
    // is checked too, not ignored.
    if (authorization !== undefined) {
      const beside = checkEncodedBearer(authorization, expected);
      if (!beside.ok) return { ok: false, reason: `${beside.reason} (beside Business and Secret)` };
    }
    verdict = { ok: true, scheme: 'business-headers' };
  } else if (authorization !== undefined) {
    verdict = checkEncodedBearer(authorization, expected);
    if (!verdict.ok) return verdict;
  }
  const merchant = options.allowMerchantHeaders
    ? checkMerchantHeaders(headers, expected, verdict !== undefined)
    : undefined;
  if (merchant && !merchant.ok) return merchant;
  return verdict ?? merchant ?? { ok: false, reason: 'no credentials' };
}

/**
 * `merchant_id` + `secret_key` (history calls only): undefined when neither is sent. Alone they
 * must come together; beside other credentials (`beside`) each one sent must still be right.
 */
function checkMerchantHeaders(
  headers: HeaderBag,
  expected: PlatformCredentials,
  beside: boolean,
): AuthVerdict | undefined {
  const merchant = header(headers, 'merchant_id');
  const secretKey = header(headers, 'secret_key');
  if (merchant === undefined && secretKey === undefined) return undefined;
  if (!beside && (merchant === undefined || secretKey === undefined)) {
    return { ok: false, reason: 'merchant_id and secret_key headers must be sent together' };
  }
  // Spec, Authentication: "A further remark for the message-history operation in the earlier
  // form says it takes headers merchant_id and secret_key." It does not say how they combine
  // with other credentials. Strict reading (conformance finding 1): every credential presented
  // must be right, so a wrong merchant_id or secret_key next to valid credentials is refused.
  if (merchant !== undefined && merchant !== expected.businessId) {
    return { ok: false, reason: 'unknown merchant_id' };
  }
  if (secretKey !== undefined && !sameSecret(secretKey, expected.secret)) {
    return { ok: false, reason: 'wrong secret_key' };
  }
  return { ok: true, scheme: 'merchant-headers' };
}
