import type { NextFunction, Request, Response } from 'express';
import { clientAddress } from './client-address.js';
import { equalsConstantTime } from './constant-time.js';
import type { LoginFailureReport } from './login-failures.js';
import type { LoginThrottle } from './login-throttle.js';

export interface AdminCredentials {
  username: string;
  password: string;
}

/** The username and password of an `Authorization: Basic` header; null when there is none. */
export function basicCredentials(header: string | undefined): { username: string; password: string } | null {
  const [scheme, encoded] = (header ?? '').trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'basic' || !encoded) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // A header that decodes to no `user:password` is still an attempt, and fails like a wrong one.
  if (colon < 0) return { username: decoded, password: '' };
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Both halves compared, always, in constant time: no early exit tells which one was wrong. */
export function matchesCredentials(
  presented: { username: string; password: string },
  expected: AdminCredentials,
): boolean {
  const userOk = equalsConstantTime(presented.username, expected.username);
  const passOk = equalsConstantTime(presented.password, expected.password);
  return userOk && passOk;
}

/** Who a request passed the guard as, in `res.locals.caller`: the admin, or what a Bearer token stands for. */
export const ADMIN_CALLER = Object.freeze({ kind: 'admin' as const });
export type AdminCaller = typeof ADMIN_CALLER;

/**
 * A Bearer token's check (the operator API's console links): what the token stands for, or null
 * for a token that is malformed, forged, expired or revoked, which is refused like a wrong password.
 */
export type BearerCheck = (token: string) => Promise<object | null>;

/** A refusal of the guard, for a mount that writes its own error bodies (the operator API). */
export interface GuardRefusal {
  status: 401 | 429;
  code: 'UNAUTHENTICATED' | 'BAD_CREDENTIALS' | 'TOO_MANY_FAILURES';
  message: string;
  hint: string;
}
export type RefusalWriter = (res: Response, refusal: GuardRefusal) => void;

const BASIC_CHALLENGE = 'Basic realm="convo-bridge admin", charset="UTF-8"';

/** The token of an `Authorization: Bearer` header; null when the header is of another scheme or none. */
export function bearerToken(header: string | undefined): string | null {
  const [scheme, token, ...rest] = (header ?? '').trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'bearer') return null;
  // `Bearer` alone, or with more than one word, is an attempt all the same: it fails like a bad token.
  return rest.length === 0 && token ? token : '';
}

/** The admin pages' own refusal bodies (bull-board's mount). */
const writeAdminRefusal: RefusalWriter = (res, refusal) => {
  res.status(refusal.status).json({ success: false, error: refusal.message });
};

/**
 * HTTP basic auth (and, where a mount accepts them, Bearer tokens) with failed logins limited per
 * client address (login-throttle.ts):
 * - a locked-out address is answered 429 with Retry-After, its password not even looked at;
 * - no credentials: 401 with a realm (a browser's first request; not a failure);
 * - wrong credentials, or a bad token: 401, counted against the address, logged and counted in the
 *   metric;
 * - right ones: the address's failures are forgotten, `res.locals.caller` says who it is, and the
 *   request goes on.
 * The client address is the socket's: behind a reverse proxy, the proxy's (docs/production.md).
 */
export function createAdminGuard(deps: {
  credentials: AdminCredentials;
  throttle: LoginThrottle;
  report: LoginFailureReport;
  bearer?: BearerCheck;
  refuse?: RefusalWriter;
}) {
  const { credentials, throttle, report, bearer } = deps;
  const refuse = deps.refuse ?? writeAdminRefusal;
  const challenge = bearer ? `${BASIC_CHALLENGE}, Bearer realm="convo-bridge api"` : BASIC_CHALLENGE;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const client = clientAddress(req.socket.remoteAddress);
    const verdict = throttle.verdict(client);
    if (verdict.kind === 'locked') {
      report.note({ outcome: 'throttled', client, retryAfterMs: verdict.retryAfterMs });
      const seconds = Math.ceil(verdict.retryAfterMs / 1000);
      res.set('retry-after', String(seconds));
      refuse(res, {
        status: 429,
        code: 'TOO_MANY_FAILURES',
        message: `too many wrong admin logins from this address: try again in ${seconds} s`,
        hint: 'check the password or token, then wait for the Retry-After seconds',
      });
      return;
    }
    const token = bearer ? bearerToken(req.headers.authorization) : null;
    const presented = token === null ? basicCredentials(req.headers.authorization) : null;
    if (presented !== null && matchesCredentials(presented, credentials)) {
      throttle.succeeded(client);
      res.locals.caller = ADMIN_CALLER;
      next();
      return;
    }
    const caller = token !== null && token !== '' && bearer ? await bearer(token) : null;
    if (caller !== null) {
      throttle.succeeded(client);
      res.locals.caller = caller;
      next();
      return;
    }
    if (presented !== null || token !== null)
      report.note({ outcome: 'refused', client, ...throttle.failed(client) });
    res.set('www-authenticate', challenge);
    refuse(
      res,
      presented === null && token === null
        ? {
            status: 401,
            code: 'UNAUTHENTICATED',
            message: 'admin login required (admin.username / admin.password in the config)',
            hint: bearer
              ? 'send Authorization: Basic with the admin password, or Authorization: Bearer with a console link token'
              : 'send Authorization: Basic with admin.username and admin.password',
          }
        : {
            status: 401,
            code: 'BAD_CREDENTIALS',
            message:
              token !== null
                ? 'the token is not valid: malformed, signed with another secret, expired or revoked'
                : 'admin login required (admin.username / admin.password in the config)',
            hint:
              token !== null
                ? 'ask the operator for a new link (`convo-bridge console link`); repeated failures lock this address out for a while'
                : 'check admin.username and admin.password; repeated failures lock this address out for a while',
          },
    );
  };
}
