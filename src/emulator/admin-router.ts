import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import { describeError } from '../base/errors.js';
import {
  AuthStormBody,
  CreateConversationBody,
  CustomerMessageBody,
  DeliveryStatusBody,
  EmptyBody,
  PlanBody,
  parseAdminBody,
  ReplyBody,
  ReseedBody,
  ResetBody,
  TakeOverBody,
  WebhookBody,
} from './admin-requests.js';
import { CONVERSATION_STATUSES, type ConversationStatus } from './conversation-status.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import { EmulatorError } from './emulator-error.js';
import { escapeHtml } from './escape-html.js';
import { FaultSpecSchema } from './faults.js';
import type { InboxClocks } from './inbox-clocks.js';
import { INBOX_PATH, renderInboxPage } from './inbox-page.js';

/**
 * The admin API under /_emulator/ (no platform authentication: it is the test harness's and the
 * inbox page's door into the emulator). JSON in and out; the inbox page's plain HTML forms post
 * url-encoded bodies to the same endpoints and are redirected back to the page (303).
 */
function isForm(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}

/** Only the inbox page itself is a valid redirect target (no open redirect). */
function redirectTarget(req: Request, fallback: string): string {
  const body = req.body as Record<string, unknown> | undefined;
  const wanted = body?._redirect;
  return typeof wanted === 'string' && (wanted === INBOX_PATH || wanted.startsWith(`${INBOX_PATH}?`))
    ? wanted
    : fallback;
}

function bodyOf(req: Request): unknown {
  const body = req.body as unknown;
  if (body === undefined) return {};
  if (isForm(req) && typeof body === 'object' && body !== null) {
    const { _redirect: _ignored, ...rest } = body as Record<string, unknown>;
    return rest;
  }
  return body;
}

function param(req: Request, name: string): string {
  const value = req.params[name];
  return typeof value === 'string' ? value : '';
}

type Handler = (req: Request) => unknown;

export function createAdminRouter(admin: EmulatorAdmin): Router {
  const router = Router();
  router.use(express.json({ limit: '1mb' }));
  router.use(express.urlencoded({ extended: false, limit: '1mb' }));

  /** A JSON endpoint that also serves the inbox forms (redirecting back to the conversation). */
  const action = (handler: Handler) => async (req: Request, res: Response) => {
    const result = await handler(req);
    if (isForm(req)) {
      const id = param(req, 'id');
      res.redirect(
        303,
        redirectTarget(req, id === '' ? INBOX_PATH : `${INBOX_PATH}?c=${encodeURIComponent(id)}`),
      );
      return;
    }
    res.status(200).json(result ?? { ok: true });
  };
  const body = <T>(schema: z.ZodType<T>, req: Request) =>
    parseAdminBody(schema, bodyOf(req), `${req.method} ${req.originalUrl}`);

  router.get(
    '/state',
    action(() => admin.summary()),
  );
  router.post(
    '/reset',
    action(async (req) => {
      const { empty } = body(ResetBody, req);
      await admin.reset({ empty: empty ?? false });
      return admin.summary();
    }),
  );

  router.get(
    '/conversations',
    action((req) => {
      const status = typeof req.query.status === 'string' ? req.query.status : undefined;
      if (status !== undefined && !CONVERSATION_STATUSES.includes(status as ConversationStatus)) {
        throw new EmulatorError(
          'EMULATOR_BAD_REQUEST',
          `unknown status ${JSON.stringify(status)}: use one of ${CONVERSATION_STATUSES.join(', ')}`,
        );
      }
      return {
        counts: admin.statusCounts(),
        needHumanTotal: admin.needHumanTotal(),
        conversations: admin.conversations({ status: status as ConversationStatus | undefined }),
      };
    }),
  );
  router.post(
    '/conversations',
    action((req) => {
      const input = body(CreateConversationBody, req);
      return admin.createConversation(input);
    }),
  );
  router.get(
    '/conversations/:id',
    action((req) => admin.conversation(param(req, 'id'))),
  );
  router.post(
    '/conversations/:id/customer-message',
    action((req) => {
      const input = body(CustomerMessageBody, req);
      return admin.customerMessage(param(req, 'id'), input);
    }),
  );
  router.post(
    '/conversations/:id/ai-reply',
    action((req) => admin.aiReply(param(req, 'id'), body(ReplyBody, req).text)),
  );
  router.post(
    '/conversations/:id/agent-reply',
    action((req) => {
      const input = body(ReplyBody, req);
      return admin.agentReply(param(req, 'id'), input.text, input.agentName);
    }),
  );
  router.post(
    '/conversations/:id/take-over',
    action((req) => admin.takeOver(param(req, 'id'), body(TakeOverBody, req).agentName)),
  );
  const simple: [string, (id: string) => unknown][] = [
    ['return-to-ai', (id) => admin.returnToAi(id)],
    ['done', (id) => admin.done(id)],
    ['hand-over', (id) => admin.handOver(id)],
    ['block', (id) => admin.block(id)],
    ['skip', (id) => admin.skip(id)],
    ['read', (id) => admin.markRead(id)],
  ];
  for (const [name, run] of simple) {
    router.post(
      `/conversations/:id/${name}`,
      action((req) => {
        body(EmptyBody, req);
        return run(param(req, 'id'));
      }),
    );
  }

  router.post(
    '/messages/:id/delivery-status',
    action((req) => {
      const id = Number(param(req, 'id'));
      if (!Number.isInteger(id))
        throw new EmulatorError('EMULATOR_BAD_REQUEST', 'message id must be an integer (the history `id`)');
      return admin.setDeliveryStatus(id, body(DeliveryStatusBody, req).status);
    }),
  );
  router.post(
    '/delivery/advance',
    action(() => ({ moved: admin.advanceDelivery() })),
  );

  router.get(
    '/requests',
    action((req) => {
      const limit = typeof req.query.limit === 'string' ? Number(req.query.limit) : undefined;
      return {
        requests: admin.requests(
          limit !== undefined && Number.isInteger(limit) && limit >= 0 ? limit : undefined,
        ),
      };
    }),
  );

  router.get(
    '/deliveries',
    action(() => ({ deliveries: admin.deliveries() })),
  );
  router.get(
    '/deliveries/:id',
    action((req) => admin.delivery(param(req, 'id'))),
  );
  router.post(
    '/deliveries/:id/redeliver',
    action((req) => admin.redeliver(param(req, 'id'))),
  );
  router.get(
    '/delivery-log',
    action(() => ({ attempts: admin.deliveryLog() })),
  );
  router.get(
    '/webhook',
    action(() => ({ webhook: admin.webhook() })),
  );
  router.put(
    '/webhook',
    action((req) => {
      admin.setWebhook(body(WebhookBody, req));
      return { webhook: admin.webhook() };
    }),
  );
  router.delete(
    '/webhook',
    action(() => {
      admin.setWebhook(undefined);
      return { webhook: null };
    }),
  );

  router.get(
    '/handover-webhook',
    action(() => ({ handoverWebhook: admin.handoverWebhook(), deliveries: admin.handoverDeliveries() })),
  );
  router.put(
    '/handover-webhook',
    action((req) => {
      admin.setHandoverWebhook(body(WebhookBody, req));
      return { handoverWebhook: admin.handoverWebhook() };
    }),
  );
  router.delete(
    '/handover-webhook',
    action(() => {
      admin.setHandoverWebhook(undefined);
      return { handoverWebhook: null };
    }),
  );
  router.put(
    '/plan',
    action((req) => {
      admin.setApiFeature(body(PlanBody, req).apiFeature);
      return { apiFeature: admin.apiFeature };
    }),
  );

  router.get(
    '/faults',
    action(() => ({ faults: admin.faults(), authStorm: admin.authStorm })),
  );
  router.post(
    '/faults',
    action((req) => admin.addFault(body(FaultSpecSchema, req))),
  );
  router.delete(
    '/faults',
    action(() => {
      admin.clearFaults();
      return { faults: [] };
    }),
  );
  router.delete(
    '/faults/:id',
    action((req) => {
      admin.removeFault(param(req, 'id'));
      return { faults: admin.faults() };
    }),
  );
  router.put(
    '/auth-storm',
    action((req) => {
      admin.setAuthStorm(body(AuthStormBody, req).active);
      return { authStorm: admin.authStorm };
    }),
  );
  router.put(
    '/random-seed',
    action((req) => {
      const { seed } = body(ReseedBody, req);
      admin.reseed(seed);
      return { seed };
    }),
  );

  router.get('/inbox', async (req: Request, res: Response) => {
    const status = typeof req.query.status === 'string' ? req.query.status : '';
    const selectedStatus = CONVERSATION_STATUSES.find((s) => s === status) ?? null;
    const selectedId = typeof req.query.c === 'string' ? req.query.c : undefined;
    let notice: string | undefined;
    let selected = null;
    if (selectedId !== undefined) {
      try {
        selected = admin.conversation(selectedId);
      } catch (error) {
        notice = describeError(error);
      }
    }
    let clocks: InboxClocks | null = null;
    if (selected !== null) {
      try {
        clocks = await admin.clocks(selected.id);
      } catch (error) {
        notice = `the bridge's clocks could not be read: ${describeError(error)}`;
      }
    }
    const counts = admin.statusCounts();
    res
      .status(200)
      .type('html')
      .send(
        renderInboxPage({
          businessName: admin.summary().business.name,
          form: admin.form,
          counts,
          total: Object.values(counts).reduce((sum, n) => sum + n, 0),
          status: selectedStatus,
          conversations: admin.conversations({ status: selectedStatus ?? undefined }),
          selected,
          clocks,
          nowMs: admin.nowMs(),
          notice,
        }),
      );
  });

  router.use((req: Request, res: Response) => {
    res.status(404).json({
      error: {
        code: 'EMULATOR_NOT_FOUND',
        message: `no admin endpoint ${req.method} ${req.originalUrl}: see docs/emulator.md`,
      },
    });
  });

  // Admin errors: JSON for API callers, a short page with a way back for the inbox forms.
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = error instanceof EmulatorError;
    const parseFailed =
      typeof error === 'object' &&
      error !== null &&
      'type' in error &&
      (error as { type: unknown }).type === 'entity.parse.failed';
    const status = known ? error.httpStatus : parseFailed ? 400 : 500;
    const code = known ? error.code : parseFailed ? 'EMULATOR_BAD_REQUEST' : 'EMULATOR_INTERNAL';
    const message = parseFailed
      ? `the body is not valid JSON: ${describeError(error)}`
      : describeError(error);
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
  });

  return router;
}
