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

/**
 * HTTP basic auth with failed logins limited per client address (login-throttle.ts):
 * - a locked-out address is answered 429 with Retry-After, its password not even looked at;
 * - no credentials: 401 with a realm (a browser's first request; not a failure);
 * - wrong credentials: 401, counted against the address, logged and counted in the metric;
 * - right ones: the address's failures are forgotten, and the request goes on.
 * The client address is the socket's: behind a reverse proxy, the proxy's (docs/production.md).
 */
export function createAdminGuard(deps: {
  credentials: AdminCredentials;
  throttle: LoginThrottle;
  report: LoginFailureReport;
}) {
  const { credentials, throttle, report } = deps;
  return (req: Request, res: Response, next: NextFunction): void => {
    const client = clientAddress(req.socket.remoteAddress);
    const verdict = throttle.verdict(client);
    if (verdict.kind === 'locked') {
      report.note({ outcome: 'throttled', client, retryAfterMs: verdict.retryAfterMs });
      const seconds = Math.ceil(verdict.retryAfterMs / 1000);
      res
        .status(429)
        .set('retry-after', String(seconds))
        .json({
          success: false,
          error: `too many wrong admin logins from this address: try again in ${seconds} s`,
        });
      return;
    }
    const presented = basicCredentials(req.headers.authorization);
    if (presented !== null && matchesCredentials(presented, credentials)) {
      throttle.succeeded(client);
      next();
      return;
    }
    if (presented !== null) report.note({ outcome: 'refused', client, ...throttle.failed(client) });
    res.status(401).set('www-authenticate', 'Basic realm="convo-bridge admin", charset="UTF-8"').json({
      success: false,
      error: 'admin login required (admin.username / admin.password in the config)',
    });
  };
}
