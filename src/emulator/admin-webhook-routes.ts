import type { Router } from 'express';
import { adminAction, param, readAdminBody } from './admin-http.js';
import { WebhookBody } from './admin-requests.js';
import type { EmulatorAdmin } from './emulator-admin.js';

/**
 * The admin API's webhooks: the deliveries and their attempts (and redelivering one), where the
 * message webhooks go, and the agent's separate hand-over address.
 */
export function registerWebhookRoutes(router: Router, admin: EmulatorAdmin): void {
  router.get(
    '/deliveries',
    adminAction(() => ({ deliveries: admin.deliveries() })),
  );
  router.get(
    '/deliveries/:id',
    adminAction((req) => admin.delivery(param(req, 'id'))),
  );
  router.post(
    '/deliveries/:id/redeliver',
    adminAction((req) => admin.redeliver(param(req, 'id'))),
  );
  router.get(
    '/delivery-log',
    adminAction(() => ({ attempts: admin.deliveryLog() })),
  );
  router.get(
    '/webhook',
    adminAction(() => ({ webhook: admin.webhook() })),
  );
  router.put(
    '/webhook',
    adminAction((req) => {
      admin.setWebhook(readAdminBody(WebhookBody, req));
      return { webhook: admin.webhook() };
    }),
  );
  router.delete(
    '/webhook',
    adminAction(() => {
      admin.setWebhook(undefined);
      return { webhook: null };
    }),
  );

  router.get(
    '/handover-webhook',
    adminAction(() => ({ handoverWebhook: admin.handoverWebhook(), deliveries: admin.handoverDeliveries() })),
  );
  router.put(
    '/handover-webhook',
    adminAction((req) => {
      admin.setHandoverWebhook(readAdminBody(WebhookBody, req));
      return { handoverWebhook: admin.handoverWebhook() };
    }),
  );
  router.delete(
    '/handover-webhook',
    adminAction(() => {
      admin.setHandoverWebhook(undefined);
      return { handoverWebhook: null };
    }),
  );
}
