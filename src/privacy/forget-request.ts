import type { Customer } from '../base/customer-match.js';
import { ConvoBridgeError, describeError } from '../base/errors.js';
import type { KeyLayout } from '../queue/key-layout.js';
import type { RedisClient } from '../redis/redis-client.js';
import { ForgetUnavailableError } from './check-every-node.js';
import { type CustomerMatches, findCustomer, forgetQuarantineIds } from './find-customer.js';
import { ForgetBusyError, type ForgetResult, forgetConversation } from './forget-conversation.js';

/** A data subject's request: conversations by id, customers by phone number or e-mail address. */
export interface ForgetRequest {
  conversations: string[];
  customers: Customer[];
  dryRun: boolean;
  waitMs: number;
}

/** What was erased (or, dry, would be): per customer what holds them, per conversation per store. */
export interface ForgetOutput {
  dryRun: boolean;
  customers: { customer: string; matches: CustomerMatches }[];
  conversations: ForgetResult[];
  /** Quarantined bodies holding a customer but naming no conversation. */
  quarantineWithoutConversation: number;
}

/**
 * A forget that stopped part-way: a node down, events that did not finish in time, or Redis
 * failing mid-way. The message says which conversations were erased before it; forget is
 * idempotent, so running it again finishes the job.
 */
export class ForgetStoppedError extends ConvoBridgeError {}

/**
 * Carries out one request, as `convo-bridge forget` and the operator API's `POST .../forget` do:
 * each customer's conversations found (and their quarantined bodies naming none erased), then
 * every conversation erased in turn.
 */
export async function forgetRequest(
  redis: RedisClient,
  layout: KeyLayout,
  request: ForgetRequest,
): Promise<ForgetOutput> {
  const output: ForgetOutput = {
    dryRun: request.dryRun,
    customers: [],
    conversations: [],
    quarantineWithoutConversation: 0,
  };
  const ids = new Set(request.conversations);
  for (const customer of request.customers) {
    const matches = await findCustomer(redis, layout, customer);
    output.customers.push({ customer: customer.written, matches });
    for (const id of matches.conversations) ids.add(id);
    output.quarantineWithoutConversation += await forgetQuarantineIds(
      redis,
      layout,
      matches.quarantineIds,
      request.dryRun,
    );
  }
  for (const id of ids) {
    try {
      output.conversations.push(
        await forgetConversation(redis, layout, id, { dryRun: request.dryRun, waitMs: request.waitMs }),
      );
    } catch (error) {
      const done = output.conversations.map((r) => JSON.stringify(r.conversationId)).join(', ') || 'none';
      if (error instanceof ForgetBusyError || error instanceof ForgetUnavailableError) {
        throw new ForgetStoppedError(`${error.message}. Conversations erased before it: ${done}`, {
          code: error.code,
          cause: error,
        });
      }
      throw new ForgetStoppedError(
        `forget stopped while erasing conversation ${JSON.stringify(id)}: ${describeError(error)}. Part of it may be erased; forget is idempotent, so run it again once Redis answers. Conversations erased before it: ${done}`,
        { code: 'FORGET_INCOMPLETE', cause: error },
      );
    }
  }
  return output;
}
