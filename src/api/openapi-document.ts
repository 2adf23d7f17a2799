import { z } from 'zod';
import { packageVersion } from '../base/package-version.js';
import { ApiErrorBodySchema } from './api-error.js';
import type { ApiRoute } from './api-route.js';

type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without its `$schema`. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** The path or query parameters of an object schema, one per property. */
function parameters(schema: z.ZodObject | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (schema === undefined) return [];
  const whole = jsonSchema(schema, 'input');
  const properties = (whole.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((whole.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const STATUS_WORDS: Record<number, string> = {
  400: 'The input is not valid: the message names the parameter or field.',
  401: 'No credentials, a wrong password or a bad token (counted against the client address).',
  403: 'The link may not do this (a viewer retrying, an operator purging).',
  404: "No such business for this caller (another business's link gets the same answer), or no such item.",
  409: 'The state changed: e.g. the dead letters selected are not the previewed set.',
  429: 'Too many failed logins from this address: wait Retry-After seconds.',
  503: "Redis cannot be reached, or the conversation's events did not finish in time.",
};

function operation(route: ApiRoute): JsonSchema {
  const errors = [400, 401, 403, 404, 429, ...route.errors].sort();
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    'x-access': route.access,
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    ...(route.body !== undefined
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
          },
        }
      : {}),
    responses: {
      200: {
        description: 'OK',
        content: { 'application/json': { schema: jsonSchema(route.response, 'output') } },
      },
      ...Object.fromEntries(
        errors.map((status) => [
          String(status),
          {
            description: STATUS_WORDS[status] ?? 'Refused.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        ]),
      ),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the API, made from the very zod schemas that validate each route's
 * parameters and body (and describe its answer), so that the document cannot drift from the code.
 */
export function openApiDocument(routes: readonly ApiRoute[], basePath: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const entry = paths[route.path] ?? {};
    entry[route.method] = operation(route);
    paths[route.path] = entry;
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'convo-bridge operator API',
      version: packageVersion(),
      description:
        'What the bridge did, to whom and why, and the operations on it. Every answer that is not a success is {error: {code, message, hint}}. docs/api.md has examples.',
    },
    servers: [{ url: basePath }],
    security: [{ admin: [] }, { consoleLink: [] }],
    components: {
      securitySchemes: {
        admin: {
          type: 'http',
          scheme: 'basic',
          description: 'admin.username and admin.password: everything.',
        },
        consoleLink: {
          type: 'http',
          scheme: 'bearer',
          description: 'The token of `convo-bridge console link`: one business, viewer or operator.',
        },
      },
      schemas: { Error: jsonSchema(ApiErrorBodySchema, 'output') },
    },
    paths,
  };
}
