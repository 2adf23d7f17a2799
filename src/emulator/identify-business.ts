import {
  type AuthenticateOptions,
  bearerToken,
  decodeBusinessBearer,
  type HeaderBag,
  header,
  sameSecret,
} from './authenticate-request.js';
import type { ApiForm } from './channels.js';

/**
 * Which business a platform request speaks for, when the emulator hosts several.
 * Pure: headers in, the index of a business out. Only the identifying part of the credentials is
 * read here; `authenticateRequest` then checks every credential presented against that one
 * business, so a request that names one business and carries another's secret fails exactly as a
 * wrong secret does.
 *   current form: the `Business` header, else the business id inside the encoded bearer, else
 *   `merchant_id` (history call);
 *   earlier form: `merchant_id` (history call), else the business whose Secret Key the plain
 *   bearer is, else the one whose key `secret_key` is.
 */
export interface BusinessKey {
  readonly businessId: string;
  /** The Secret Key as configured (an auth storm's rotation does not change who a key names). */
  readonly secret: string;
}

/**
 * The index of the business the credentials name, or undefined when they name none the emulator
 * knows (no credentials, an unknown id, a key of nobody); the caller then answers as its first
 * business, as a one-business emulator always did.
 */
export function identifyBusiness(
  form: ApiForm,
  headers: HeaderBag,
  businesses: readonly BusinessKey[],
  options: AuthenticateOptions,
): number | undefined {
  const byId = (id: string | undefined) => {
    if (id === undefined) return undefined;
    const index = businesses.findIndex((business) => business.businessId === id);
    return index === -1 ? undefined : index;
  };
  const authorization = header(headers, 'authorization');
  if (form === 'current') {
    const named = header(headers, 'business');
    if (named !== undefined) return byId(named);
    const token = authorization === undefined ? undefined : bearerToken(authorization);
    if (token !== undefined) return byId(decodeBusinessBearer(token)?.businessId);
    return options.allowMerchantHeaders ? byId(header(headers, 'merchant_id')) : undefined;
  }
  if (options.allowMerchantHeaders) {
    const merchant = header(headers, 'merchant_id');
    if (merchant !== undefined) return byId(merchant);
  }
  const token = authorization === undefined ? undefined : bearerToken(authorization);
  const key = token ?? (options.allowMerchantHeaders ? header(headers, 'secret_key') : undefined);
  return key === undefined ? undefined : byKey(key, businesses);
}

/** The business whose Secret Key `key` is. Every key is compared, in constant time each. */
function byKey(key: string, businesses: readonly BusinessKey[]): number | undefined {
  let found: number | undefined;
  businesses.forEach((business, index) => {
    if (sameSecret(key, business.secret) && found === undefined) found = index;
  });
  return found;
}
