import type { BearerCheck } from '../admin/admin-guard.js';
import type { ApiDeps } from './api-deps.js';
import type { Caller } from './caller.js';
import { verifyLink } from './console-link.js';
import { isLinkRevoked } from './link-revocations.js';

/**
 * The admin guard's check of a Bearer token: a console link signed with `admin.link_secret`, not
 * expired, not revoked. Without a secret no token is good. A refused token is counted by the guard
 * like a wrong password.
 */
export function consoleLinkCheck(
  deps: Pick<ApiDeps, 'linkSecret' | 'redis' | 'layout' | 'now'>,
): BearerCheck {
  return async (token) => {
    if (deps.linkSecret === null) return null;
    const grant = verifyLink(deps.linkSecret, token, deps.now?.() ?? Date.now());
    if (grant === null) return null;
    if (await isLinkRevoked(deps.redis, deps.layout.global, grant.id)) return null;
    const caller: Caller = { kind: 'link', grant };
    return caller;
  };
}
