/**
 * The headers every admin answer carries (a 401 and a 429 too): a Content-Security-Policy,
 * framing refused (or allowed to the configured origins only), no MIME sniffing, no referrer, no
 * caching, and no use of its resources by other origins.
 */

/** CSP directives: name -> sources. */
export type CspDirectives = Readonly<Record<string, readonly string[]>>;

/** Same origin only, no inline script or style: the policy an admin page gets unless it needs more. */
export const STRICT_CSP: CspDirectives = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'manifest-src': ["'self'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
};

export function adminSecurityHeaders(
  csp: CspDirectives,
  frameAncestors: readonly string[],
): Record<string, string> {
  const framing = frameAncestors.length === 0 ? ["'none'"] : frameAncestors;
  const policy = Object.entries({ ...csp, 'frame-ancestors': framing })
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join('; ');
  return {
    'content-security-policy': policy,
    // For browsers without frame-ancestors; it cannot name several origins, so only when none may frame.
    ...(frameAncestors.length === 0 ? { 'x-frame-options': 'DENY' } : {}),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'cross-origin-resource-policy': 'same-origin',
  };
}
