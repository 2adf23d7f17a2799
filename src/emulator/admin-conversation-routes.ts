import type { Request, Router } from 'express';
import { adminAction, param, readAdminBody, selectedAdmin } from './admin-http.js';
import {
  CreateConversationBody,
  CustomerMessageBody,
  DeliveryStatusBody,
  EmptyBody,
  ReplyBody,
  TakeOverBody,
} from './admin-requests.js';
import { CONVERSATION_STATUSES, type ConversationStatus } from './conversation-status.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import { EmulatorError } from './emulator-error.js';

/**
 * The admin API's conversations: list, create and read them, play the customer, the AI and the
 * dashboard's agent in them (each step emits its webhook), and move their messages' delivery status.
 */
export function registerConversationRoutes(router: Router, businesses: EmulatorBusinesses): void {
  const admin = (req: Request): EmulatorAdmin => selectedAdmin(businesses, req);
  router.get(
    '/conversations',
    adminAction((req) => {
      const status = typeof req.query.status === 'string' ? req.query.status : undefined;
      if (status !== undefined && !CONVERSATION_STATUSES.includes(status as ConversationStatus)) {
        throw new EmulatorError(
          'EMULATOR_BAD_REQUEST',
          `unknown status ${JSON.stringify(status)}: use one of ${CONVERSATION_STATUSES.join(', ')}`,
        );
      }
      return {
        counts: admin(req).statusCounts(),
        needHumanTotal: admin(req).needHumanTotal(),
        conversations: admin(req).conversations({ status: status as ConversationStatus | undefined }),
      };
    }),
  );
  router.post(
    '/conversations',
    adminAction((req) => {
      const input = readAdminBody(CreateConversationBody, req);
      return admin(req).createConversation(input);
    }),
  );
  router.get(
    '/conversations/:id',
    adminAction((req) => admin(req).conversation(param(req, 'id'))),
  );
  router.post(
    '/conversations/:id/customer-message',
    adminAction((req) => {
      const input = readAdminBody(CustomerMessageBody, req);
      return admin(req).customerMessage(param(req, 'id'), input);
    }),
  );
  router.post(
    '/conversations/:id/ai-reply',
    adminAction((req) => admin(req).aiReply(param(req, 'id'), readAdminBody(ReplyBody, req).text)),
  );
  router.post(
    '/conversations/:id/agent-reply',
    adminAction((req) => {
      const input = readAdminBody(ReplyBody, req);
      return admin(req).agentReply(param(req, 'id'), input.text, input.agentName);
    }),
  );
  router.post(
    '/conversations/:id/take-over',
    adminAction((req) => admin(req).takeOver(param(req, 'id'), readAdminBody(TakeOverBody, req).agentName)),
  );
  const simple: [string, (req: Request, id: string) => unknown][] = [
    ['return-to-ai', (req, id) => admin(req).returnToAi(id)],
    ['done', (req, id) => admin(req).done(id)],
    ['hand-over', (req, id) => admin(req).handOver(id)],
    ['block', (req, id) => admin(req).block(id)],
    ['skip', (req, id) => admin(req).skip(id)],
    ['read', (req, id) => admin(req).markRead(id)],
  ];
  for (const [name, run] of simple) {
    router.post(
      `/conversations/:id/${name}`,
      adminAction((req) => {
        readAdminBody(EmptyBody, req);
        return run(req, param(req, 'id'));
      }),
    );
  }

  router.post(
    '/messages/:id/delivery-status',
    adminAction((req) => {
      const id = Number(param(req, 'id'));
      if (!Number.isInteger(id))
        throw new EmulatorError('EMULATOR_BAD_REQUEST', 'message id must be an integer (the history `id`)');
      return admin(req).setDeliveryStatus(id, readAdminBody(DeliveryStatusBody, req).status);
    }),
  );
  router.post(
    '/delivery/advance',
    adminAction((req) => ({ moved: admin(req).advanceDelivery() })),
  );
}
