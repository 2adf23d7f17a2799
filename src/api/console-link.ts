import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ConvoBridgeError } from '../base/errors.js';
import { BusinessIdSchema } from '../events/business-id.js';

/**
 * Console links: a token that opens one business's operator API (and, later, its console) with one
 * role, until it expires or is revoked. It is `cbl1.<payload>.<signature>`: the payload (base64url
 * JSON: link id, business, role, expiry) signed with HMAC-SHA256 under a key derived from
 * `admin.link_secret`, so the bridge keeps no table of links: a token is checked by its signature
 * and expiry, and against the small set of revoked ids (link-revocations.ts). Rotating the secret
 * makes every link ever handed out fail its signature. Pure: no Redis, the clock passed in.
 */
export const LINK_ROLES = ['viewer', 'operator'] as const;
export type LinkRole = (typeof LINK_ROLES)[number];

/** What a link grants. */
export interface LinkGrant {
  /** Random, for `console link revoke`; names nothing about the business or the customer. */
  id: string;
  business: string;
  role: LinkRole;
  /** Milliseconds since 1970. */
  expiresAt: number;
}

/** The longest a link may live: revocations are kept this long, so the revocation set stays bounded. */
export const MAX_LINK_MS = 366 * 86_400_000;

const PREFIX = 'cbl1';
const PayloadSchema = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  b: BusinessIdSchema,
  r: z.enum(LINK_ROLES),
  exp: z.number().int().positive(),
});

export class ConsoleLinkError extends ConvoBridgeError {}

/** The signing key: derived, so that the configured secret itself never signs anything directly. */
function signingKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('convo-bridge console link v1').digest();
}

function sign(secret: string, payload: string): string {
  return createHmac('sha256', signingKey(secret)).update(`${PREFIX}.${payload}`).digest('base64url');
}

/** A new link's token and grant, valid for `forMs` from `now`. */
export function issueLink(
  secret: string,
  input: { business: string; role: LinkRole; forMs: number },
  now: number = Date.now(),
): { token: string; grant: LinkGrant } {
  if (!(input.forMs > 0 && input.forMs <= MAX_LINK_MS)) {
    throw new ConsoleLinkError(
      `a console link lives from 1 ms to ${MAX_LINK_MS / 86_400_000} days, not ${input.forMs} ms: pass e.g. --for 7d`,
      { code: 'LINK_DURATION' },
    );
  }
  const grant: LinkGrant = {
    id: randomBytes(8).toString('hex'),
    business: input.business,
    role: input.role,
    expiresAt: now + input.forMs,
  };
  const payload = Buffer.from(
    JSON.stringify({
      id: grant.id,
      b: grant.business,
      r: grant.role,
      exp: Math.ceil(grant.expiresAt / 1000),
    }),
  ).toString('base64url');
  return { token: `${PREFIX}.${payload}.${sign(secret, payload)}`, grant };
}

/**
 * The grant of a token whose signature holds under `secret` and which has not expired by `now`;
 * null otherwise (malformed, forged, signed with another secret, expired). Revocation is checked
 * apart (it needs Redis).
 */
export function verifyLink(secret: string, token: string, now: number = Date.now()): LinkGrant | null {
  const [prefix, payload, signature, ...rest] = token.split('.');
  if (prefix !== PREFIX || !payload || !signature || rest.length > 0) return null;
  const expected = Buffer.from(sign(secret, payload));
  const presented = Buffer.from(signature);
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const parsed = PayloadSchema.safeParse(decoded);
  if (!parsed.success) return null;
  const expiresAt = parsed.data.exp * 1000;
  if (expiresAt <= now) return null;
  return { id: parsed.data.id, business: parsed.data.b, role: parsed.data.r, expiresAt };
}

/**
 * Where a link opens the console: the business's page, the token in the URL's fragment. A browser
 * never sends a fragment to a server, nor in a Referer, so the token stays out of access logs and
 * proxies; the console's page reads it from there (the API takes it as a Bearer token).
 */
export function consoleUrl(base: string, business: string, token: string): string {
  return `${base.replace(/\/+$/, '')}/console/businesses/${encodeURIComponent(business)}#token=${token}`;
}
