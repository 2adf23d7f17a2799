import { z } from 'zod';
import { defineRoute } from './api-route.js';
import { limitSchema } from './api-schemas.js';
import { AuditEntrySchema, readAudit } from './audit-log.js';
import { maySee } from './caller.js';

const BusinessStateSchema = z.object({
  id: z.string(),
  state: z.enum(['ok', 'paused']),
  why: z.string().nullable().describe('Why it is paused, as /readyz says; null when ok.'),
});

/** `GET /businesses`: the businesses the caller may see, with `/readyz`'s word on each. */
export const listBusinesses = defineRoute({
  method: 'get',
  path: '/businesses',
  operationId: 'listBusinesses',
  summary: 'The businesses you may see, each ok or paused and why',
  access: 'viewer',
  response: z.object({ businesses: z.array(BusinessStateSchema) }),
  handle: async (_input, ctx) => {
    const states = ctx.deps.businessStates();
    const businesses = ctx.deps
      .businesses()
      .filter((business) => maySee(ctx.caller, business.id))
      .map((business) => {
        const word = states[business.id] ?? 'ok';
        return word === 'ok'
          ? { id: business.id, state: 'ok' as const, why: null }
          : { id: business.id, state: 'paused' as const, why: word };
      });
    return { businesses };
  },
});

/** `GET /audit`: the changes made through the API, newest first; a link sees its business's only. */
export const listAudit = defineRoute({
  method: 'get',
  path: '/audit',
  operationId: 'listAudit',
  summary: 'Every change made through the API: who, what, when, which business, the ids',
  description:
    'Newest first; a console link sees the changes to its own business only. Holds no customer text and no conversation id.',
  access: 'viewer',
  query: z.object({ limit: limitSchema(1000, 100) }),
  response: z.object({ entries: z.array(AuditEntrySchema) }),
  handle: async ({ query }, ctx) => {
    const business = ctx.caller.kind === 'link' ? ctx.caller.grant.business : undefined;
    const entries = await readAudit(ctx.deps.redis, ctx.deps.layout.global, {
      limit: query.limit,
      ...(business !== undefined ? { business } : {}),
    });
    return { entries };
  },
});
