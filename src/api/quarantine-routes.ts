import { z } from 'zod';
import { listQuarantine, QUARANTINE_REASONS } from '../receive/quarantine-store.js';
import { ReceiverError } from '../receive/receiver-errors.js';
import { replayQuarantined } from '../receive/replay-quarantined.js';
import type { ApiBusiness } from './api-deps.js';
import { ApiError } from './api-error.js';
import { defineRoute } from './api-route.js';
import { BusinessParamsSchema, limitSchema } from './api-schemas.js';

const QuarantineViewSchema = z.object({
  id: z.string(),
  receivedAt: z.string(),
  reason: z.enum(QUARANTINE_REASONS),
  message: z.string().describe('Why the receiver could not understand it.'),
  eventName: z.string().nullable(),
  conversation: z.string().nullable(),
  bodyBytes: z.number().int(),
  replayable: z.boolean().describe('False when the body was stored cut at the cap.'),
});

/** `GET .../quarantine`: the bodies the receiver kept, newest first (without the bodies). */
export const listQuarantineRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/quarantine',
  operationId: 'listQuarantine',
  summary: 'Webhook bodies the receiver could not understand, newest first',
  description: 'The bodies themselves stay out of the answer; `convo-bridge quarantine show ID` prints one.',
  access: 'viewer',
  params: BusinessParamsSchema,
  query: z.object({ limit: limitSchema() }),
  response: z.object({ entries: z.array(QuarantineViewSchema) }),
  handle: async ({ query }, ctx) => {
    const business = ctx.business as ApiBusiness;
    const store = { redis: ctx.deps.redis, keys: ctx.deps.layout.forNaming(business.naming).global };
    const entries = await listQuarantine(store, { limit: query.limit });
    return {
      entries: entries.map((e) => ({
        id: e.id,
        receivedAt: e.receivedAt,
        reason: e.reason,
        message: e.message,
        eventName: e.eventName,
        conversation: e.conversationId,
        bodyBytes: e.bodyBytes,
        replayable: !e.truncated,
      })),
    };
  },
});

/** `POST .../quarantine/{entry}/replay`: normalises the body again and queues it exactly once (operator). */
export const replayQuarantineRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/quarantine/{entry}/replay',
  operationId: 'replayQuarantine',
  summary: 'Replay a quarantined body: normalised again and queued exactly once',
  access: 'operator',
  params: BusinessParamsSchema.extend({
    entry: z
      .string()
      .regex(/^q-[0-9a-f]+$/)
      .describe('A quarantine id (q-...).'),
  }),
  errors: [409],
  response: z.object({
    id: z.string(),
    outcome: z.enum(['queued', 'duplicate', 'ignored']).describe('ignored: a test ping, nothing to queue.'),
    jobId: z.string().nullable(),
  }),
  handle: async ({ params }, ctx) => {
    const business = ctx.business as ApiBusiness;
    const store = { redis: ctx.deps.redis, keys: ctx.deps.layout.forNaming(business.naming).global };
    try {
      const result = await replayQuarantined(
        { store, ingest: ctx.deps.ingestFor(business.naming) },
        params.entry,
      );
      const jobId = result.outcome === 'ignored' ? null : result.ingest.jobId;
      await ctx.audit({ action: 'quarantine.replay', ids: [params.entry], outcome: result.outcome });
      return { id: params.entry, outcome: result.outcome, jobId };
    } catch (error) {
      if (error instanceof ReceiverError && error.code === 'QUARANTINE_NOT_FOUND') {
        throw new ApiError(404, 'NOT_FOUND', error.message, 'GET .../quarantine lists the entries', {
          cause: error,
        });
      }
      if (error instanceof ReceiverError && error.code === 'QUARANTINE_NOT_REPLAYABLE') {
        throw new ApiError(409, 'NOT_REPLAYABLE', error.message, 'the entry stays; see its reason', {
          cause: error,
        });
      }
      throw error;
    }
  },
});
