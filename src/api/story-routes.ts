import { z } from 'zod';
import { StoryQueryError } from '../story/story-reader.js';
import { SearchPageSchema, STORY_OUTCOMES, StatsSchema, StorySchema } from '../story/story-schema.js';
import type { ApiBusiness } from './api-deps.js';
import { ApiError } from './api-error.js';
import { defineRoute } from './api-route.js';
import { BusinessParamsSchema, instantOf, limitSchema, timeSchema } from './api-schemas.js';

const ConversationParamsSchema = BusinessParamsSchema.extend({
  conversation: z.string().min(1).max(300).describe('A conversation id.'),
});

/** `GET .../conversations`: search by id, phone or e-mail however written, name, tag, rule, outcome, time. */
export const searchConversationsRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/conversations',
  operationId: 'searchConversations',
  summary:
    'Find conversations: by id, a phone number or e-mail the customer wrote, name, tag, rule, outcome, time',
  description:
    "The most recently active first. Pass the answer's cursor back for the next page. The search text stays out of every URL the API builds and out of the log.",
  access: 'viewer',
  params: BusinessParamsSchema,
  query: z.object({
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('A conversation id, a phone number or e-mail however written, or words of the name.'),
    tag: z.string().min(1).max(200).optional(),
    rule: z.string().min(1).max(200).optional().describe('A rule that matched at least once.'),
    outcome: z.enum(STORY_OUTCOMES).optional(),
    since: timeSchema.optional().describe('Last active at or after (an instant, or a duration before now).'),
    until: timeSchema.optional(),
    limit: limitSchema(200, 20),
    cursor: z.string().min(1).max(1000).optional().describe("The previous page's cursor."),
  }),
  response: SearchPageSchema,
  handle: async ({ query }, ctx) => {
    const business = ctx.business as ApiBusiness;
    const { limit, cursor, since, until, ...rest } = query;
    const now = ctx.now();
    try {
      return await ctx.deps.stories.search(
        business.id,
        {
          ...rest,
          ...(since !== undefined ? { since: instantOf(since, now) } : {}),
          ...(until !== undefined ? { until: instantOf(until, now) } : {}),
        },
        { limit, cursor: cursor ?? null },
      );
    } catch (error) {
      if (!(error instanceof StoryQueryError)) throw error;
      throw new ApiError(
        400,
        'INVALID_INPUT',
        `the search cannot be answered: ${error.message}`,
        'start again without cursor, or drop the filter named',
        { cause: error },
      );
    }
  },
});

/** `GET .../conversations/{conversation}`: the story; 404 once forgotten or expired. */
export const storyRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/conversations/{conversation}',
  operationId: 'getStory',
  summary: "A conversation's story: each event, each rule's verdict, each action and what became of it",
  access: 'viewer',
  params: ConversationParamsSchema,
  response: StorySchema,
  handle: async ({ params }, ctx) => {
    const business = ctx.business as ApiBusiness;
    const story = await ctx.deps.stories.story(business.id, params.conversation);
    if (story === null) {
      throw new ApiError(
        404,
        'NOT_FOUND',
        `business ${business.id} keeps no story of that conversation: never seen, forgotten, or older than retention.stories`,
        'search for it: GET .../conversations?q=...',
      );
    }
    return story;
  },
});

/** `GET .../stats?since=24h`: events, actions, escalations, first agent reply, from the hourly buckets. */
export const statsRoute = defineRoute({
  method: 'get',
  path: '/businesses/{business}/stats',
  operationId: 'getStats',
  summary:
    'Events, actions by type, escalations and their rate, time to the first agent reply, blocked replies, dead letters, shadow differences',
  access: 'viewer',
  params: BusinessParamsSchema,
  query: z.object({ since: timeSchema.default('24h') }),
  response: StatsSchema,
  handle: async ({ query }, ctx) => {
    const business = ctx.business as ApiBusiness;
    return ctx.deps.stories.stats(business.id, instantOf(query.since, ctx.now()));
  },
});
