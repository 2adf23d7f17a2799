import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { describeError } from '../base/errors.js';
import { registerConversationRoutes } from './admin-conversation-routes.js';
import { registerFaultRoutes } from './admin-fault-routes.js';
import { adminAction, isForm, readAdminBody, redirectTarget } from './admin-http.js';
import { registerInboxRoute } from './admin-inbox-route.js';
import { PlanBody, ResetBody } from './admin-requests.js';
import { registerWebhookRoutes } from './admin-webhook-routes.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import { EmulatorError } from './emulator-error.js';
import { escapeHtml } from './escape-html.js';
import { INBOX_PATH } from './inbox-page.js';

/** The emulator as a whole: its summary, a reset, the platform API's request log, the business's plan. */
function registerStateRoutes(router: Router, admin: EmulatorAdmin): void {
  router.get(
    '/state',
    adminAction(() => admin.summary()),
  );
  router.post(
    '/reset',
    adminAction(async (req) => {
      const { empty } = readAdminBody(ResetBody, req);
      await admin.reset({ empty: empty ?? false });
      return admin.summary();
    }),
  );
  router.get(
    '/requests',
    adminAction((req) => {
      const limit = typeof req.query.limit === 'string' ? Number(req.query.limit) : undefined;
      return {
        requests: admin.requests(
          limit !== undefined && Number.isInteger(limit) && limit >= 0 ? limit : undefined,
        ),
      };
    }),
  );
  router.put(
    '/plan',
    adminAction((req) => {
      admin.setApiFeature(readAdminBody(PlanBody, req).apiFeature);
      return { apiFeature: admin.apiFeature };
    }),
  );
}

function answerUnknownEndpoint(req: Request, res: Response): void {
  res.status(404).json({
    error: {
      code: 'EMULATOR_NOT_FOUND',
      message: `no admin endpoint ${req.method} ${req.originalUrl}: see docs/emulator.md`,
    },
  });
}

// Admin errors: JSON for API callers, a short page with a way back for the inbox forms.
function answerAdminError(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const known = error instanceof EmulatorError;
  const parseFailed =
    typeof error === 'object' &&
    error !== null &&
    'type' in error &&
    (error as { type: unknown }).type === 'entity.parse.failed';
  const status = known ? error.httpStatus : parseFailed ? 400 : 500;
  const code = known ? error.code : parseFailed ? 'EMULATOR_BAD_REQUEST' : 'EMULATOR_INTERNAL';
  const message = parseFailed ? `the body is not valid JSON: ${describeError(error)}` : describeError(error);
  if (isForm(req)) {
    const back = redirectTarget(req, INBOX_PATH);
    res
      .status(status)
      .type('html')
      .send(
        `<!doctype html><meta charset="utf-8"><title>Error</title><p data-testid="admin-error">${escapeHtml(message)}</p><p><a href="${escapeHtml(back)}">Back to the inbox</a></p>`,
      );
    return;
  }
  res.status(status).json({ error: { code, message } });
}

/**
 * The admin API under /_emulator/ (no platform authentication: it is the test harness's and the
 * inbox page's door into the emulator). JSON in and out; the inbox page's plain HTML forms post
 * url-encoded bodies to the same endpoints and are redirected back to the page (303).
 */
export function createAdminRouter(admin: EmulatorAdmin): Router {
  const router = Router();
  router.use(express.json({ limit: '1mb' }));
  router.use(express.urlencoded({ extended: false, limit: '1mb' }));
  registerStateRoutes(router, admin);
  registerConversationRoutes(router, admin);
  registerWebhookRoutes(router, admin);
  registerFaultRoutes(router, admin);
  registerInboxRoute(router, admin);
  router.use(answerUnknownEndpoint);
  router.use(answerAdminError);
  return router;
}
