import { z } from 'zod';
import type { BridgeKeys } from '../queue/redis-keys.js';
import {
  type DeadLetter,
  DeadLetterBusyError,
  DeadLetterNotFoundError,
  listDeadLetters,
  purgeDeadLetters,
  retryDeadLetter,
} from '../worker/failures/dead-letters.js';
import type { ApiBusiness } from './api-deps.js';
import { defineRoute, type RouteContext } from './api-route.js';
import { forbidden } from './api-router.js';
import { BusinessParamsSchema, limitSchema } from './api-schemas.js';
import { mayDo } from './caller.js';
import {
  checkPreviewedSet,
  DeadLetterFilterSchema,
  fingerprintOf,
  keepPreviewSet,
  MAX_SCANNED,
  selectDeadLetters,
} from './dead-letter-selection.js';
import { previewRetry, RetryPreviewSchema } from './retry-preview.js';

const DeadLetterViewSchema = z.object({
  id: z.string(),
  queue: z.enum(['events', 'timers']),
  conversation: z.string().nullable(),
  eventKey: z.string().nullable(),
  failedAt: z.string(),
  error: z.object({ code: z.string(), reason: z.string() }),
  attempts: z.number().int(),
  replays: z.number().int().describe('How many times it was retried before.'),
  actions: z.array(z.object({ id: z.string(), state: z.string(), detail: z.string().optional() })),
});

function viewOf(entry: DeadLetter): z.infer<typeof DeadLetterViewSchema> {
  return {
    id: entry.id,
    queue: entry.queue,
    conversation: entry.conversationId,
    eventKey: entry.eventKey,
    failedAt: entry.failedAt,
    error: { code: entry.code, reason: entry.reason },
    attempts: entry.attempts,
    replays: entry.replays,
    actions: entry.actions,
  };
}

function keysOf(ctx: RouteContext): { business: ApiBusiness; keys: BridgeKeys } {
  const business = ctx.business as ApiBusiness;
  return { business, keys: ctx.deps.layout.forNaming(business.naming).global };
}

/** `GET .../dead-letters`: the dead letters a filter selects, newest first. */
export const listDeadLettersRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/dead-letters',
  operationId: 'listDeadLetters',
  summary: 'Dead letters, newest first, by rule, action, error kind and time',
  access: 'viewer',
  params: BusinessParamsSchema,
  query: DeadLetterFilterSchema.extend({ limit: limitSchema() }),
  response: z.object({
    count: z.number().int().describe('How many the filter selects (the list shows the newest `limit`).'),
    deadLetters: z.array(DeadLetterViewSchema),
  }),
  handle: async ({ query }, ctx) => {
    const { limit, ...filter } = query;
    const selected = await selectDeadLetters(ctx.deps.redis, keysOf(ctx).keys, filter, ctx.now());
    return { count: selected.length, deadLetters: selected.slice(0, limit).map(viewOf) };
  },
});

const SelectionSchema = z
  .object({
    ids: z.array(z.string().min(1).max(300)).min(1).max(MAX_SCANNED).optional().describe('Dead-letter ids.'),
    filter: DeadLetterFilterSchema.optional().describe('Or a filter, as the list takes it.'),
    preview: z
      .boolean()
      .describe('true: say what would happen, do nothing; false: do it (needs `fingerprint`).'),
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional()
      .describe("The preview's fingerprint: the change is made only if the selection is still that set."),
  })
  .refine((body) => (body.ids === undefined) !== (body.filter === undefined), {
    error: 'give either ids or filter (exactly one of them)',
  })
  .refine((body) => body.preview || body.fingerprint !== undefined, {
    error: 'without preview, fingerprint is required: preview first and send back the fingerprint it answers',
    path: ['fingerprint'],
  });
type Selection = z.infer<typeof SelectionSchema>;

/** The dead letters a body names now, and the ids it names that are gone. */
async function selectionOf(
  ctx: RouteContext,
  keys: BridgeKeys,
  body: Selection,
): Promise<{ entries: DeadLetter[]; missing: string[] }> {
  if (body.filter !== undefined) {
    return { entries: await selectDeadLetters(ctx.deps.redis, keys, body.filter, ctx.now()), missing: [] };
  }
  const wanted = new Set(body.ids);
  const entries = (await listDeadLetters(ctx.deps.redis, keys, { limit: MAX_SCANNED })).filter((e) =>
    wanted.has(e.id),
  );
  const found = new Set(entries.map((e) => e.id));
  return { entries, missing: [...wanted].filter((id) => !found.has(id)) };
}

const PreviewAnswerSchema = z.object({
  preview: z.literal(true),
  fingerprint: z.string().describe('Send it back with "preview": false to make the change on this very set.'),
  count: z.number().int(),
  missing: z.array(z.string()).describe('Ids asked for that are no dead letter (any more).'),
});

const ChangeAnswerSchema = z.object({
  preview: z.literal(false),
  fingerprint: z.string(),
  count: z.number().int(),
  done: z.array(z.object({ id: z.string(), jobId: z.string().optional() })),
  skipped: z.array(z.object({ id: z.string(), why: z.string() })),
});

/** Previews are kept under the business's fingerprint, which a change must send back. */
async function preview(
  ctx: RouteContext,
  body: Selection,
  keys: BridgeKeys,
): Promise<{ entries: DeadLetter[]; answer: z.infer<typeof PreviewAnswerSchema> }> {
  const { entries, missing } = await selectionOf(ctx, keys, body);
  const ids = entries.map((e) => e.id);
  const fingerprint = fingerprintOf((ctx.business as ApiBusiness).id, ids);
  await keepPreviewSet(ctx.deps.redis, ctx.deps.layout.global, fingerprint, ids);
  return { entries, answer: { preview: true, fingerprint, count: ids.length, missing } };
}

/** The set of a change: the one previewed under its fingerprint, or a 409 with the difference. */
async function previewedSet(ctx: RouteContext, body: Selection, keys: BridgeKeys, verb: string) {
  const { entries } = await selectionOf(ctx, keys, body);
  const fingerprint = body.fingerprint ?? '';
  await checkPreviewedSet(
    ctx.deps.redis,
    ctx.deps.layout.global,
    fingerprint,
    entries.map((e) => e.id),
    verb,
  );
  return { entries, fingerprint };
}

function skippedWhy(error: unknown): string | null {
  if (error instanceof DeadLetterNotFoundError) return 'gone since (retried, purged or expired)';
  if (error instanceof DeadLetterBusyError) return 'being retried by another request';
  return null;
}

/**
 * `POST .../dead-letters/retry`: with `preview: true`, what a retry of each selected dead letter
 * would run now, calling nothing; with `preview: false` and the preview's fingerprint, each of
 * that very set put back on its queue once (a set that changed since is refused with the
 * difference; a dead letter is claimed before it is re-queued, so two retries never both add it).
 */
export const retryDeadLettersRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/dead-letters/retry',
  operationId: 'retryDeadLetters',
  summary: 'Preview, then retry, dead letters by ids or by filter',
  description:
    'A viewer may preview; retrying needs an operator link or the admin. The preview calls nothing: per dead letter it says what the current rules would plan against the original plan and which actions a retry would run. The retry takes the fingerprint of the preview and re-queues exactly that set, each once; a set that changed since is refused (409 SET_CHANGED) with the difference.',
  access: 'viewer',
  params: BusinessParamsSchema,
  body: SelectionSchema,
  errors: [409],
  response: z.union([
    PreviewAnswerSchema.extend({ deadLetters: z.array(RetryPreviewSchema) }),
    ChangeAnswerSchema,
  ]),
  handle: async ({ body }, ctx) => {
    const { business, keys } = keysOf(ctx);
    const { layout } = ctx.deps;
    const shardKeys = (conversationId: string) =>
      layout.forNaming(business.naming).shardOf(conversationId).keys;
    if (body.preview) {
      const { entries, answer } = await preview(ctx, body, keys);
      const now = new Date(ctx.now());
      const deadLetters = [];
      for (const entry of entries) {
        deadLetters.push(await previewRetry(ctx.deps.redis, shardKeys, business, entry, now));
      }
      return { ...answer, deadLetters };
    }
    if (!mayDo(ctx.caller, 'operator')) throw forbidden(ctx.caller, 'operator', 'retrying dead letters');
    const { entries, fingerprint } = await previewedSet(ctx, body, keys, 'retry');
    const queuesOf = (conversationId: string) => ctx.deps.queues(layout.shardOf(conversationId).index);
    const done: { id: string; jobId: string }[] = [];
    const skipped: { id: string; why: string }[] = [];
    for (const entry of entries) {
      try {
        done.push({ id: entry.id, ...(await retryDeadLetter(ctx.deps.redis, keys, queuesOf, entry.id)) });
      } catch (error) {
        const why = skippedWhy(error);
        if (why === null) throw error;
        skipped.push({ id: entry.id, why });
      }
    }
    await ctx.audit({
      action: 'dead-letters.retry',
      ids: done.map((d) => d.id),
      outcome: `${done.length} re-queued${skipped.length > 0 ? `, ${skipped.length} skipped` : ''}`,
    });
    return { preview: false as const, fingerprint, count: entries.length, done, skipped };
  },
});

/** `POST .../dead-letters/purge`: the same preview and fingerprint, then delete (admin only). */
export const purgeDeadLettersRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/dead-letters/purge',
  operationId: 'purgeDeadLetters',
  summary: 'Preview, then delete, dead letters by ids or by filter (admin)',
  access: 'admin',
  params: BusinessParamsSchema,
  body: SelectionSchema,
  errors: [409],
  response: z.union([
    PreviewAnswerSchema.extend({ deadLetters: z.array(DeadLetterViewSchema) }),
    ChangeAnswerSchema,
  ]),
  handle: async ({ body }, ctx) => {
    const { keys } = keysOf(ctx);
    if (body.preview) {
      const { entries, answer } = await preview(ctx, body, keys);
      return { ...answer, deadLetters: entries.map(viewOf) };
    }
    const { entries, fingerprint } = await previewedSet(ctx, body, keys, 'purge');
    const done: { id: string }[] = [];
    const skipped: { id: string; why: string }[] = [];
    for (const entry of entries) {
      try {
        await purgeDeadLetters(ctx.deps.redis, keys, entry.id);
        done.push({ id: entry.id });
      } catch (error) {
        const why = skippedWhy(error);
        if (why === null) throw error;
        skipped.push({ id: entry.id, why });
      }
    }
    await ctx.audit({
      action: 'dead-letters.purge',
      ids: done.map((d) => d.id),
      outcome: `${done.length} deleted`,
    });
    return { preview: false as const, fingerprint, count: entries.length, done, skipped };
  },
});
