import type { Job } from 'bullmq';
import { z } from 'zod';
import { tagOfJob } from '../events/business-naming.js';
import { listConversationClocks } from '../worker/timers/list-timers.js';
import { cancelTimer, TimerJobDataSchema } from '../worker/timers/timers.js';
import type { ApiBusiness } from './api-deps.js';
import { ApiError } from './api-error.js';
import { defineRoute, type RouteContext } from './api-route.js';
import { BusinessParamsSchema } from './api-schemas.js';

const TimerViewSchema = z.object({
  timerId: z.string(),
  rule: z.string(),
  trigger: z.enum(['after', 'window_closing', 'burst']),
  clock: z.enum(['wall', 'business']),
  dueAt: z.string(),
  dueLocal: z.string().nullable(),
  state: z
    .string()
    .describe('pending (and what cancels it), firing, cancelled; a burst: collecting N message(s)'),
});

const ClocksSchema = z.object({
  conversation: z.string(),
  timers: z.array(TimerViewSchema),
  lastCustomerMessageAt: z.string().nullable(),
  window: z.object({
    channelKind: z.string().nullable(),
    applies: z.boolean(),
    closesAt: z.string().nullable(),
    closesLocal: z.string().nullable(),
  }),
});

/** `GET .../timers`: per conversation, its pending timers and when its reply window closes. */
export const listTimersRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/timers',
  operationId: 'listTimers',
  summary: 'Pending timers and open bursts by conversation, with the reply window',
  access: 'viewer',
  params: BusinessParamsSchema,
  query: z.object({
    conversation: z.string().min(1).max(300).optional().describe('Only this conversation.'),
  }),
  response: z.object({ conversations: z.array(ClocksSchema) }),
  handle: async ({ query }, ctx) => {
    const business = ctx.business as ApiBusiness;
    const layout = ctx.deps.layout.forNaming(business.naming);
    const shards = query.conversation === undefined ? layout.all : [layout.shardOf(query.conversation)];
    const conversations = [];
    for (const shard of shards) {
      const clocks = await listConversationClocks(
        ctx.deps.redis,
        shard.keys,
        ctx.deps.queues(shard.index).timers,
        {
          config: business.config,
          now: new Date(ctx.now()),
          ...(query.conversation !== undefined ? { conversationId: query.conversation } : {}),
        },
      );
      for (const { conversationId, ...rest } of clocks)
        conversations.push({ conversation: conversationId, ...rest });
    }
    return { conversations };
  },
});

const TimerParamsSchema = BusinessParamsSchema.extend({
  timer: z
    .string()
    .regex(/^tm-[0-9a-f]{40}$/)
    .describe('A timer id, as GET .../timers lists it (tm-...).'),
});

/** The timer's job and its data, found on the shards of the business; 404 for another's or none. */
async function findTimer(ctx: RouteContext, timerId: string) {
  const business = ctx.business as ApiBusiness;
  const layout = ctx.deps.layout.forNaming(business.naming);
  for (const shard of layout.all) {
    const queue = ctx.deps.queues(shard.index).timers;
    const job: Job | undefined = await queue.getJob(timerId);
    const data = TimerJobDataSchema.safeParse(job?.data);
    if (job === undefined || !data.success || tagOfJob(data.data.business) !== business.naming.tag) continue;
    return { job, data: data.data, queue, keys: layout.shardOf(data.data.conversationId).keys };
  }
  throw new ApiError(
    404,
    'NOT_FOUND',
    `no pending timer ${timerId} in business ${business.id}`,
    'GET .../timers lists the pending timers; a timer that fired or was cancelled is gone',
  );
}

const TimerActionAnswerSchema = z.object({
  timerId: z.string(),
  outcome: z.enum(['cancelled', 'firing', 'gone', 'due now']),
});

/** `POST .../timers/{timer}/cancel`: cancels a pending timer (operator). */
export const cancelTimerRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/timers/{timer}/cancel',
  operationId: 'cancelTimer',
  summary: 'Cancel a pending timer: it never fires',
  description: 'A timer already firing is left to finish (outcome firing).',
  access: 'operator',
  params: TimerParamsSchema,
  response: TimerActionAnswerSchema,
  handle: async ({ params }, ctx) => {
    const found = await findTimer(ctx, params.timer);
    const outcome = await cancelTimer(
      ctx.deps.redis,
      found.keys,
      found.queue,
      found.data.conversationId,
      params.timer,
    );
    await ctx.audit({ action: 'timers.cancel', ids: [params.timer], outcome });
    return { timerId: params.timer, outcome };
  },
});

/** `POST .../timers/{timer}/fire`: makes a pending timer due now (operator). */
export const fireTimerRoute = defineRoute({
  method: 'post',
  path: '/businesses/{business}/timers/{timer}/fire',
  operationId: 'fireTimer',
  summary: 'Fire a pending timer now instead of at its due time',
  description:
    'The timer then runs as it would have at its time: once, and not if an event cancels it first.',
  access: 'operator',
  params: TimerParamsSchema,
  errors: [409],
  response: TimerActionAnswerSchema,
  handle: async ({ params }, ctx) => {
    const found = await findTimer(ctx, params.timer);
    const state = await found.job.getState();
    if (state !== 'delayed') {
      throw new ApiError(
        409,
        'NOT_DELAYED',
        `timer ${params.timer} is ${state}, not waiting for its time`,
        'nothing to do: it runs (or ran) already',
      );
    }
    await found.job.promote();
    await ctx.audit({ action: 'timers.fire', ids: [params.timer], outcome: 'due now' });
    return { timerId: params.timer, outcome: 'due now' as const };
  },
});
