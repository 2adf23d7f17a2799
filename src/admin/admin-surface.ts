import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AdminSettings } from '../config/config-schema.js';
import { type BearerCheck, createAdminGuard, type RefusalWriter } from './admin-guard.js';
import { createLoginFailureReport } from './login-failures.js';
import {
  createLoginThrottle,
  LOGIN_THROTTLE_DEFAULTS,
  type LoginThrottleSettings,
} from './login-throttle.js';
import { adminSecurityHeaders, type CspDirectives, STRICT_CSP } from './security-headers.js';

/** Where bull-board, the queue dashboard, is served. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

export interface MountOptions {
  csp?: CspDirectives;
  bearer?: BearerCheck;
  refuse?: RefusalWriter;
}

export interface AdminSurface {
  /** Every admin route, behind the guard; `app.use(surface.router)` serves them. */
  readonly router: Router;
  /**
   * Serves `handler` at `path` behind the one guard (basic auth, the login throttle) and the
   * security headers, with `csp` when the pages there need more than STRICT_CSP. `bearer` lets
   * Bearer tokens in too (their failures counted by the same throttle); `refuse` writes the
   * guard's 401 and 429 bodies in the mount's own shape.
   */
  mount(path: string, handler: RequestHandler, options?: MountOptions): void;
  /** The security headers (STRICT_CSP) for answers outside any mount, e.g. a 404. */
  readonly headers: RequestHandler;
  /** Logs the failed logins counted and not logged yet (a closing bridge). */
  flush(): void;
}

/**
 * The admin surface: one guard and one set of headers that every admin route is mounted behind,
 * whether it is served on the receiver's port or on `admin.listen` (admin-server.ts).
 */
export function createAdminSurface(deps: {
  admin: Pick<AdminSettings, 'username' | 'frameAncestors'> & { password: string };
  log: Logger;
  registry: Registry;
  /** Failed logins from one address: one log line per this interval with their count. */
  repeatLogIntervalMs: number;
  throttle?: LoginThrottleSettings;
}): AdminSurface {
  const { admin } = deps;
  const report = createLoginFailureReport({
    log: deps.log,
    registry: deps.registry,
    intervalMs: deps.repeatLogIntervalMs,
  });
  // One throttle for every mount: a client guessing tokens on the API is the same client guessing
  // the password on the dashboard.
  const throttle = createLoginThrottle(deps.throttle ?? LOGIN_THROTTLE_DEFAULTS);
  const credentials = { username: admin.username, password: admin.password };
  const guardFor = (options: MountOptions) =>
    createAdminGuard({
      credentials,
      throttle,
      report,
      ...(options.bearer ? { bearer: options.bearer } : {}),
      ...(options.refuse ? { refuse: options.refuse } : {}),
    });
  const headersFor = (csp: CspDirectives): RequestHandler => {
    const headers = adminSecurityHeaders(csp, admin.frameAncestors);
    return (_req: Request, res: Response, next: NextFunction) => {
      res.set(headers);
      next();
    };
  };
  const router = express.Router();
  return {
    router,
    mount(path, handler, options = {}) {
      router.use(path, headersFor(options.csp ?? STRICT_CSP), guardFor(options), handler);
    },
    headers: headersFor(STRICT_CSP),
    flush: () => report.flush(),
  };
}
