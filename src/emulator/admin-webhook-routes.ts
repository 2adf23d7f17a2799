import type { Request, Router } from 'express';
import { adminAction, param, readAdminBody, selectedAdmin } from './admin-http.js';
import { WebhookBody } from './admin-requests.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';

/**
 * The admin API's webhooks: the deliveries and their attempts (and redelivering one), where the
 * message webhooks go, and the agent's separate hand-over address.
 */
export function registerWebhookRoutes(router: Router, businesses: EmulatorBusinesses): void {
  const admin = (req: Request): EmulatorAdmin => selectedAdmin(businesses, req);
  router.get(
    '/deliveries',
    adminAction((req) => ({ deliveries: admin(req).deliveries() })),
  );
  router.get(
    '/deliveries/:id',
    adminAction((req) => admin(req).delivery(param(req, 'id'))),
  );
  router.post(
    '/deliveries/:id/redeliver',
    adminAction((req) => admin(req).redeliver(param(req, 'id'))),
  );
  router.get(
    '/delivery-log',
    adminAction((req) => ({ attempts: admin(req).deliveryLog() })),
  );
  router.get(
    '/webhook',
    adminAction((req) => ({ webhook: admin(req).webhook() })),
  );
  router.put(
    '/webhook',
    adminAction((req) => {
      admin(req).setWebhook(readAdminBody(WebhookBody, req));
      return { webhook: admin(req).webhook() };
    }),
  );
  router.delete(
    '/webhook',
    adminAction((req) => {
      admin(req).setWebhook(undefined);
      return { webhook: null };
    }),
  );

  router.get(
    '/handover-webhook',
    adminAction((req) => ({
      handoverWebhook: admin(req).handoverWebhook(),
      deliveries: admin(req).handoverDeliveries(),
    })),
  );
  router.put(
    '/handover-webhook',
    adminAction((req) => {
      admin(req).setHandoverWebhook(readAdminBody(WebhookBody, req));
      return { handoverWebhook: admin(req).handoverWebhook() };
    }),
  );
  router.delete(
    '/handover-webhook',
    adminAction((req) => {
      admin(req).setHandoverWebhook(undefined);
      return { handoverWebhook: null };
    }),
  );
}
