import type { z } from 'zod';
import type { ApiBusiness, ApiDeps } from './api-deps.js';
import { ApiError } from './api-error.js';
import type { Access, Caller } from './caller.js';

/** What a handler is given beside its validated input. */
export interface RouteContext {
  deps: ApiDeps;
  caller: Caller;
  /** The business of `{business}` in the path (one the caller may see); undefined on other routes. */
  business: ApiBusiness | undefined;
  /** Records a change in the audit (who and when are filled in). */
  audit(change: { action: string; ids: readonly string[]; outcome: string }): Promise<void>;
  now(): number;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** A route as written: its schemas (which validate it and which openapi.json is made from) and its handler. */
export interface RouteSpec<
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  R extends z.ZodType,
> {
  method: 'get' | 'post';
  /** Under /api/v1, OpenAPI style: `/businesses/{business}/timers/{timer}/cancel`. */
  path: string;
  /** The operation's id in openapi.json. */
  operationId: string;
  summary: string;
  description?: string;
  /** The least role that may call it (a link of another business gets 404 before this is asked). */
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  /** The error statuses it may answer beside 400, 401, 403, 404 and 429. */
  errors?: readonly number[];
  handle(input: { params: Out<P>; query: Out<Q>; body: Out<B> }, ctx: RouteContext): Promise<z.input<R>>;
}

/** A route with its types erased, as the router and the OpenAPI document take it. */
export interface ApiRoute {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  summary: string;
  description: string | undefined;
  access: Access;
  params: z.ZodObject | undefined;
  query: z.ZodObject | undefined;
  body: z.ZodType | undefined;
  response: z.ZodType;
  errors: readonly number[];
  run(raw: { params: unknown; query: unknown; body: unknown }, ctx: RouteContext): Promise<unknown>;
}

/** Where an input was wrong, in words: `query.limit: Too big: expected number to be <=200`. */
function describeIssues(where: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => `${[where, ...issue.path.map(String)].join('.')}: ${issue.message}`)
    .join('; ');
}

function parse<S extends z.ZodType | undefined>(schema: S, raw: unknown, where: string): Out<S> {
  if (schema === undefined) return undefined as Out<S>;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as Out<S>;
  throw new ApiError(
    400,
    'INVALID_INPUT',
    `the request's ${where} is not valid: ${describeIssues(where, parsed.error)}`,
    'GET /api/v1/openapi.json describes every parameter and body of the API',
    { cause: parsed.error },
  );
}

export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(spec: RouteSpec<P, Q, B, R>): ApiRoute {
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    access: spec.access,
    params: spec.params,
    query: spec.query,
    body: spec.body,
    response: spec.response,
    errors: spec.errors ?? [],
    run: (raw, ctx) =>
      spec.handle(
        {
          params: parse(spec.params as P, raw.params, 'path'),
          query: parse(spec.query as Q, raw.query, 'query'),
          body: parse(spec.body as B, raw.body ?? {}, 'body'),
        },
        ctx,
      ),
  };
}
