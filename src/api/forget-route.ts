import { z } from 'zod';
import { type Customer, CustomerQueryError, parseCustomer } from '../base/customer-match.js';
import { parseDuration } from '../base/duration.js';
import { checkEveryNode, ForgetUnavailableError } from '../privacy/check-every-node.js';
import { ForgetStoppedError, forgetRequest } from '../privacy/forget-request.js';
import type { ApiBusiness } from './api-deps.js';
import { ApiError } from './api-error.js';
import { defineRoute } from './api-route.js';
import { BusinessParamsSchema } from './api-schemas.js';

/** The longest `wait`: an HTTP request should not hang longer than a proxy waits. */
const MAX_WAIT_MS = 25_000;

const ForgetBodySchema = z
  .object({
    conversation: z.string().trim().min(1).max(300).optional().describe('A conversation id to erase.'),
    customer: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .describe(
        'A phone number or e-mail address, however written: every conversation holding it is erased.',
      ),
    dry_run: z.boolean().default(false).describe('Say what would be erased, erase nothing.'),
    wait: z
      .string()
      .refine(
        (text) => {
          const ms = parseDuration(text);
          return ms !== undefined && ms <= MAX_WAIT_MS;
        },
        `a duration up to ${MAX_WAIT_MS / 1000}s, e.g. 20s`,
      )
      .default('20s')
      .describe("How long to wait for the conversations' queued or running events to finish (up to 25s)."),
  })
  .refine((body) => (body.conversation === undefined) !== (body.customer === undefined), {
    error: 'give either conversation or customer (exactly one of them)',
  });

const ForgetAnswerSchema = z.object({
  dryRun: z.boolean(),
  customers: z.array(
    z.object({
      customer: z.string(),
      matches: z.object({ conversations: z.array(z.string()), quarantineIds: z.array(z.string()) }),
    }),
  ),
  conversations: z.array(
    z.object({
      conversationId: z.string(),
      business: z.string().nullable(),
      erased: z.record(z.string(), z.number().int()).describe('Entries erased (or that would be) per store.'),
      waitedMs: z.number(),
      pending: z.number().int(),
    }),
  ),
  quarantineWithoutConversation: z.number().int(),
});

/**
 * `POST .../forget`: `convo-bridge forget` for the CRM that receives an erasure request, with the
 * same rules (every node reachable first, the conversation's events finished first) and the same
 * answer as its `--json`. Admin only. The audit keeps the counts, never the conversation or the
 * customer.
 */
export const forgetRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/forget',
  operationId: 'forget',
  summary: 'Erase a conversation, or every conversation of a customer (admin)',
  description:
    'The same rules and answer as `convo-bridge forget --json`. 503 when a Redis node is unreachable (nothing erased) or the events did not finish in time.',
  access: 'admin',
  params: BusinessParamsSchema,
  body: ForgetBodySchema,
  errors: [503],
  response: ForgetAnswerSchema,
  handle: async ({ body }, ctx) => {
    const business = ctx.business as ApiBusiness;
    let customers: Customer[];
    try {
      customers = body.customer === undefined ? [] : [parseCustomer(body.customer)];
    } catch (error) {
      if (!(error instanceof CustomerQueryError)) throw error;
      throw new ApiError(
        400,
        'INVALID_INPUT',
        `body.customer: ${error.message}`,
        'write a phone number or an e-mail address',
        { cause: error },
      );
    }
    const layout = ctx.deps.layout.forNaming(business.naming);
    try {
      await checkEveryNode(ctx.deps.redis);
      const output = await forgetRequest(ctx.deps.redis, layout, {
        conversations: body.conversation === undefined ? [] : [body.conversation],
        customers,
        dryRun: body.dry_run,
        waitMs: parseDuration(body.wait) ?? MAX_WAIT_MS,
      });
      const count = output.conversations.length;
      await ctx.audit({
        action: body.dry_run ? 'forget.dry-run' : 'forget',
        ids: [],
        outcome: `${body.dry_run ? 'would erase' : 'erased'} ${count} conversation(s), ${output.quarantineWithoutConversation} quarantined body(ies) naming none`,
      });
      return output;
    } catch (error) {
      if (error instanceof ForgetStoppedError || error instanceof ForgetUnavailableError) {
        throw new ApiError(
          503,
          error.code,
          error.message,
          'forget is idempotent: send the same request again once Redis answers and the worker has caught up',
          { cause: error },
        );
      }
      throw error;
    }
  },
});
