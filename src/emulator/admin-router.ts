import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { describeError } from '../base/errors.js';
import { registerConversationRoutes } from './admin-conversation-routes.js';
import { registerFaultRoutes } from './admin-fault-routes.js';
import {
  adminAction,
  isForm,
  namesEveryBusiness,
  readAdminBody,
  redirectTarget,
  selectedAdmin,
} from './admin-http.js';
import { registerInboxRoute } from './admin-inbox-route.js';
import { PlanBody, ResetBody } from './admin-requests.js';
import { registerWebhookRoutes } from './admin-webhook-routes.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import { EmulatorError } from './emulator-error.js';
import { escapeHtml } from './escape-html.js';
import { INBOX_PATH } from './inbox-page.js';

/**
 * A business as a whole (the first unless the request names one): its summary, a reset, its
 * platform API request log, its plan; and the list of the businesses the emulator hosts.
 */
function registerStateRoutes(router: Router, businesses: EmulatorBusinesses): void {
  const admin = (req: Request): EmulatorAdmin => selectedAdmin(businesses, req);
  router.get(
    '/businesses',
    adminAction(() => ({ default: businesses.first.businessId, businesses: businesses.listing() })),
  );
  router.get(
    '/state',
    adminAction((req) => admin(req).summary()),
  );
  router.post(
    '/reset',
    adminAction(async (req) => {
      const { empty } = readAdminBody(ResetBody, req);
      if (namesEveryBusiness(req)) {
        await businesses.reset({ empty: empty ?? false });
        return { businesses: businesses.listing() };
      }
      await admin(req).reset({ empty: empty ?? false });
      return admin(req).summary();
    }),
  );
  router.get(
    '/requests',
    adminAction((req) => {
      const limit = typeof req.query.limit === 'string' ? Number(req.query.limit) : undefined;
      return {
        requests: admin(req).requests(
          limit !== undefined && Number.isInteger(limit) && limit >= 0 ? limit : undefined,
        ),
      };
    }),
  );
  router.put(
    '/plan',
    adminAction((req) => {
      const { apiFeature } = readAdminBody(PlanBody, req);
      if (namesEveryBusiness(req)) {
        businesses.setApiFeature(apiFeature);
        return { apiFeature };
      }
      admin(req).setApiFeature(apiFeature);
      return { apiFeature: admin(req).apiFeature };
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
 * url-encoded bodies to the same endpoints and are redirected back to the page (303). Every
 * endpoint acts on the business named by `?business=ID` or `X-Emulator-Business`, the first by
 * default (admin-http.ts, `selectedAdmin`).
 */
export function createAdminRouter(businesses: EmulatorBusinesses): Router {
  const router = Router();
  router.use(express.json({ limit: '1mb' }));
  router.use(express.urlencoded({ extended: false, limit: '1mb' }));
  registerStateRoutes(router, businesses);
  registerConversationRoutes(router, businesses);
  registerWebhookRoutes(router, businesses);
  registerFaultRoutes(router, businesses);
  registerInboxRoute(router, businesses);
  router.use(answerUnknownEndpoint);
  router.use(answerAdminError);
  return router;
}
