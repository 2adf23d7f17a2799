import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Checks the webhook's shared secret in constant time, framework-free.
 *
 * The platform sends it as `Authorization: <secret>` (newer docs), `secret: <secret>` (older doc),
 * and `Authorization: Bearer <secret>` is accepted too (webhook-payloads.md §1). Both sides are
 * hashed with SHA-256 before `timingSafeEqual`, so a presented value of another length is an
 * ordinary mismatch (never a thrown RangeError, never a 500) and the comparison time does not depend
 * on where the values first differ. Every candidate is compared with every accepted secret, without
 * an early exit, so timing does not tell which secret (old or new, during a rotation) matched.
 */
export type SecretVerifier = (headers: IncomingHttpHeaders) => boolean;

const digest = (bytes: Buffer): Buffer => createHash('sha256').update(bytes).digest();

/**
 * Node decodes header bytes as latin1; turning the string back into latin1 bytes gives exactly what
 * was on the wire, which is then compared with the UTF-8 bytes of the configured secret. That makes
 * a non-ASCII secret work and a multibyte guess an ordinary mismatch.
 */
const wireBytes = (headerValue: string): Buffer => Buffer.from(headerValue, 'latin1');

const BEARER = /^bearer[ \t]+/i;

/** The values a request presents as its secret (at most three, from the two headers). */
export function presentedSecrets(headers: IncomingHttpHeaders): string[] {
  const candidates: string[] = [];
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.length > 0) {
    candidates.push(authorization);
    if (BEARER.test(authorization)) candidates.push(authorization.replace(BEARER, ''));
  }
  const secret = headers.secret;
  // A repeated `secret` header arrives as one comma-joined string; it is compared as it stands.
  if (typeof secret === 'string' && secret.length > 0) candidates.push(secret);
  return candidates;
}

export function createSecretVerifier(secrets: readonly string[]): SecretVerifier {
  if (secrets.length === 0 || secrets.some((s) => s.length === 0)) {
    // createReceiver validates this first with a friendlier message; this guards direct use.
    throw new TypeError('createSecretVerifier needs at least one non-empty secret');
  }
  const accepted = secrets.map((s) => digest(Buffer.from(s, 'utf8')));
  return (headers) => {
    let matched = 0;
    for (const candidate of presentedSecrets(headers)) {
      const presented = digest(wireBytes(candidate));
      for (const expected of accepted) matched |= timingSafeEqual(presented, expected) ? 1 : 0;
    }
    return matched === 1;
  };
}
