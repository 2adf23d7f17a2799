import { z } from 'zod';
import type { AdminSurface } from '../admin/admin-surface.js';
import type { ApiDeps } from './api-deps.js';
import { sendApiError } from './api-error.js';
import { type ApiRoute, defineRoute } from './api-route.js';
import { API_PATH, apiRouter } from './api-router.js';
import { consoleLinkCheck } from './bearer-check.js';
import { listAudit, listBusinesses } from './business-routes.js';
import { listDeadLettersRoute, purgeDeadLettersRoute, retryDeadLettersRoute } from './dead-letter-routes.js';
import { forgetRoute } from './forget-route.js';
import { openApiDocument } from './openapi-document.js';
import { listQuarantineRoute, replayQuarantineRoute } from './quarantine-routes.js';
import { searchConversationsRoute, statsRoute, storyRoute } from './story-routes.js';
import { cancelTimerRoute, fireTimerRoute, listTimersRoute } from './timer-routes.js';

const ROUTES: readonly ApiRoute[] = [
  listBusinesses,
  searchConversationsRoute,
  storyRoute,
  listDeadLettersRoute,
  retryDeadLettersRoute,
  purgeDeadLettersRoute,
  listTimersRoute,
  cancelTimerRoute,
  fireTimerRoute,
  listQuarantineRoute,
  replayQuarantineRoute,
  forgetRoute,
  statsRoute,
  listAudit,
];

let document: Record<string, unknown> | undefined;

const openApiRoute = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This document: OpenAPI 3.1, made from the schemas that validate the routes',
  access: 'viewer',
  response: z.record(z.string(), z.unknown()),
  handle: async () => {
    document ??= openApiDocument(API_ROUTES, API_PATH);
    return document;
  },
});

/** Every route of the API, openapi.json's own included. */
export const API_ROUTES: readonly ApiRoute[] = [...ROUTES, openApiRoute];

/**
 * Mounts the operator API at /api/v1 on the admin surface: behind its guard (the admin password,
 * or a console link's Bearer token, failures counted by one throttle), with its security headers,
 * and every refusal in the API's own error shape.
 */
export function mountOperatorApi(surface: AdminSurface, deps: ApiDeps): void {
  surface.mount(API_PATH, apiRouter(API_ROUTES, deps), {
    bearer: consoleLinkCheck(deps),
    refuse: (res, refusal) =>
      sendApiError(res, refusal.status, { code: refusal.code, message: refusal.message, hint: refusal.hint }),
  });
}
