import type { AdminCaller } from '../admin/admin-guard.js';
import type { LinkGrant, LinkRole } from './console-link.js';

/** Who calls the API: the admin (the admin password), or the holder of a console link. */
export type Caller = AdminCaller | { kind: 'link'; grant: LinkGrant };

/** What a route needs: `viewer` reads, `operator` also retries and acts on timers, `admin` all. */
export type Access = LinkRole | 'admin';

const RANK: Record<Access, number> = { viewer: 1, operator: 2, admin: 3 };

export function roleOf(caller: Caller): Access {
  return caller.kind === 'admin' ? 'admin' : caller.grant.role;
}

export function mayDo(caller: Caller, access: Access): boolean {
  return RANK[roleOf(caller)] >= RANK[access];
}

/** A link sees its own business only; the admin sees every one. */
export function maySee(caller: Caller, business: string): boolean {
  return caller.kind === 'admin' || caller.grant.business === business;
}

/** The caller as the audit names it: never the token, only the link's id. */
export function auditWho(caller: Caller): { kind: 'admin' | 'link'; id: string | null } {
  return caller.kind === 'admin' ? { kind: 'admin', id: null } : { kind: 'link', id: caller.grant.id };
}
