import type { Router } from 'express';
import { adminAction, param, readAdminBody } from './admin-http.js';
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
import { EmulatorError } from './emulator-error.js';

/**
 * The admin API's conversations: list, create and read them, play the customer, the AI and the
 * dashboard's agent in them (each step emits its webhook), and move their messages' delivery status.
 */
export function registerConversationRoutes(router: Router, admin: EmulatorAdmin): void {
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
        counts: admin.statusCounts(),
        needHumanTotal: admin.needHumanTotal(),
        conversations: admin.conversations({ status: status as ConversationStatus | undefined }),
      };
    }),
  );
  router.post(
    '/conversations',
    adminAction((req) => {
      const input = readAdminBody(CreateConversationBody, req);
      return admin.createConversation(input);
    }),
  );
  router.get(
    '/conversations/:id',
    adminAction((req) => admin.conversation(param(req, 'id'))),
  );
  router.post(
    '/conversations/:id/customer-message',
    adminAction((req) => {
      const input = readAdminBody(CustomerMessageBody, req);
      return admin.customerMessage(param(req, 'id'), input);
    }),
  );
  router.post(
    '/conversations/:id/ai-reply',
    adminAction((req) => admin.aiReply(param(req, 'id'), readAdminBody(ReplyBody, req).text)),
  );
  router.post(
    '/conversations/:id/agent-reply',
    adminAction((req) => {
      const input = readAdminBody(ReplyBody, req);
      return admin.agentReply(param(req, 'id'), input.text, input.agentName);
    }),
  );
  router.post(
    '/conversations/:id/take-over',
    adminAction((req) => admin.takeOver(param(req, 'id'), readAdminBody(TakeOverBody, req).agentName)),
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
      adminAction((req) => {
        readAdminBody(EmptyBody, req);
        return run(param(req, 'id'));
      }),
    );
  }

  router.post(
    '/messages/:id/delivery-status',
    adminAction((req) => {
      const id = Number(param(req, 'id'));
      if (!Number.isInteger(id))
        throw new EmulatorError('EMULATOR_BAD_REQUEST', 'message id must be an integer (the history `id`)');
      return admin.setDeliveryStatus(id, readAdminBody(DeliveryStatusBody, req).status);
    }),
  );
  router.post(
    '/delivery/advance',
    adminAction(() => ({ moved: admin.advanceDelivery() })),
  );
}
