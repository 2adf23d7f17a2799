import type { ResolvedClientOptions } from './client-options.js';

/**
 * The credential headers for one request. Spec: messaging-service-interface.md, "Authentication":
 * - `headers`: `Business: <id>` and `Secret: <secret>` (current form);
 * - `bearer`: `Authorization: Bearer base64(<id>:<secret>)` (current form);
 * - `bearer-secret`: `Authorization: Bearer <secret>` (earlier form).
 * The earlier form's history call is also said to take `merchant_id` and `secret_key` headers,
 * so that call carries them as well (merchant_id only when a business id is configured).
 */
export function authHeaders(
  auth: ResolvedClientOptions['auth'],
  options: { earlierFormHistory: boolean },
): Record<string, string> {
  const headers: Record<string, string> = {};
  switch (auth.scheme) {
    case 'headers':
      headers.business = auth.businessId ?? '';
      headers.secret = auth.secret;
      break;
    case 'bearer':
      headers.authorization = `Bearer ${Buffer.from(`${auth.businessId ?? ''}:${auth.secret}`).toString('base64')}`;
      break;
    case 'bearer-secret':
      headers.authorization = `Bearer ${auth.secret}`;
      break;
  }
  if (options.earlierFormHistory) {
    if (auth.businessId !== undefined) headers.merchant_id = auth.businessId;
    headers.secret_key = auth.secret;
  }
  return headers;
}
