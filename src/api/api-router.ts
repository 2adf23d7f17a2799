import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { describeError } from '../base/errors.js';
import type { ApiDeps } from './api-deps.js';
import { ApiError, businessNotFound, sendApiError } from './api-error.js';
import type { ApiRoute, RouteContext } from './api-route.js';
import { appendAudit } from './audit-log.js';
import { type Access, auditWho, type Caller, mayDo, maySee, roleOf } from './caller.js';

/** Where the API is mounted on the admin surface. */
export const API_PATH = '/api/v1';

const BODY_LIMIT = '64kb';

/** The words of a 403: what the caller's role may do, and what the route needs. */
export function forbidden(caller: Caller, access: Access, what: string): ApiError {
  return new ApiError(
    403,
    'FORBIDDEN',
    `${what} needs ${access === 'admin' ? 'the admin password' : `an ${access} link or the admin password`}; this ${caller.kind === 'admin' ? 'admin' : `${roleOf(caller)} link`} may not`,
    access === 'admin'
      ? 'ask the bridge operator to do it with the admin password'
      : `ask the bridge operator for an ${access} link (\`convo-bridge console link --role ${access}\`)`,
  );
}

function contextFor(route: ApiRoute, req: Request, res: Response, deps: ApiDeps): RouteContext {
  const caller = res.locals.caller as Caller;
  const now = () => deps.now?.() ?? Date.now();
  let business: RouteContext['business'];
  const id = (req.params as Record<string, string | undefined>).business;
  if (id !== undefined) {
    business = deps.businesses().find((b) => b.id === id);
    // Another business's link gets the answer of a business that does not exist.
    if (business === undefined || !maySee(caller, id)) throw businessNotFound(id);
  }
  if (!mayDo(caller, route.access))
    throw forbidden(caller, route.access, `${route.method.toUpperCase()} ${route.path}`);
  return {
    deps,
    caller,
    business,
    now,
    audit: (change) =>
      appendAudit(deps.redis, deps.layout.global, {
        at: new Date(now()).toISOString(),
        who: auditWho(caller),
        action: change.action,
        business: business?.id ?? null,
        ids: [...change.ids],
        outcome: change.outcome,
      }),
  };
}

/**
 * The API's routes on an Express router (mounted at API_PATH behind the admin guard, which has
 * put the caller in `res.locals.caller`): the business of the path checked against the caller
 * (404 when not theirs), the route's role (403), the input validated (400), the handler's answer
 * as JSON. Every refusal is `{error: {code, message, hint}}`. Failures are logged by route, never
 * by URL: a URL may hold a conversation id or a search.
 */
export function apiRouter(routes: readonly ApiRoute[], deps: ApiDeps): Router {
  const router = express.Router();
  router.use(express.json({ limit: BODY_LIMIT }));
  for (const route of routes) {
    const path = route.path.replace(/\{(\w+)\}/g, ':$1');
    router[route.method](path, async (req: Request, res: Response) => {
      try {
        const ctx = contextFor(route, req, res, deps);
        const answer = await route.run({ params: req.params, query: req.query, body: req.body }, ctx);
        res.status(200).json(answer);
      } catch (error) {
        answerError(error, res, deps, `${route.method.toUpperCase()} ${route.path}`);
      }
    });
  }
  router.use((req: Request, res: Response) => {
    sendApiError(res, 404, {
      code: 'NOT_FOUND',
      message: `no API route ${req.method} ${API_PATH}${req.path.split('/').slice(0, 3).join('/')}...`,
      hint: `GET ${API_PATH}/openapi.json lists every route`,
    });
  });
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    answerError(error, res, deps, 'the API');
  });
  return router;
}

function answerError(error: unknown, res: Response, deps: ApiDeps, where: string): void {
  if (error instanceof ApiError) {
    sendApiError(res, error.status, {
      code: error.code,
      message: error.message,
      hint: error.hint,
      ...(error.details ? { details: error.details } : {}),
    });
    return;
  }
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Express's body parser: not JSON, or too large.
    sendApiError(res, status, {
      code: status === 413 ? 'BODY_TOO_LARGE' : 'INVALID_BODY',
      message:
        status === 413
          ? `the request body is larger than ${BODY_LIMIT}`
          : 'the request body is not valid JSON',
      hint: 'send a JSON object with content-type: application/json (see GET /api/v1/openapi.json)',
    });
    return;
  }
  deps.log.error({ err: describeError(error), route: where }, 'operator API: a request failed');
  sendApiError(res, 500, {
    code: 'INTERNAL',
    message: `${where} failed`,
    hint: 'the bridge log says why (operator API: a request failed); try again once that is fixed',
  });
}
