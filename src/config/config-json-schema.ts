import { z } from 'zod';
import { configSchema } from './config-schema.js';

type JsonSchema = Record<string, unknown>;

const ENV_REFERENCE_DEFINITION = 'env_reference';

/**
 * JSON Schema (draft-07) of the config file as written, for editors (yaml-language-server) and
 * `convo-bridge schema`. Any scalar may instead be a `${VAR}` / `${VAR:-default}` reference,
 * which is resolved before validation, so every leaf also accepts one.
 */
export function configJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(configSchema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  const root = allowEnvReferences(schema) as JsonSchema;
  const definitions = (root.definitions ?? {}) as JsonSchema;
  definitions[ENV_REFERENCE_DEFINITION] = {
    type: 'string',
    pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}',
    description: 'An environment variable: ${NAME} or ${NAME:-default}.',
  };
  return {
    $schema: root.$schema,
    $id: 'https://convo-bridge.dev/schema/config.json',
    title: 'convo-bridge config',
    ...root,
    definitions,
  };
}

// Strings and whole numbers can come from `${VAR}` (numbers are read from numeric strings);
// booleans cannot, so they are left as they are.
const LEAF_TYPES = new Set(['string', 'number', 'integer']);

function allowEnvReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowEnvReferences);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    // Property names are keys, not schemas; recurse into their values only.
    if (key === 'properties' || key === 'definitions' || key === 'patternProperties') {
      out[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, sub]) => [name, allowEnvReferences(sub)]),
      );
    } else if (key === 'propertyNames') {
      out[key] = value;
    } else {
      out[key] = allowEnvReferences(value);
    }
  }
  const type = out.type;
  const isLeaf =
    (typeof type === 'string' && LEAF_TYPES.has(type)) || (out.enum !== undefined && type === undefined);
  const hasConstraint =
    out.pattern !== undefined || out.enum !== undefined || out.format !== undefined || type !== 'string';
  if (isLeaf && hasConstraint) {
    const { description, default: fallback, ...rest } = out;
    return {
      ...(description !== undefined ? { description } : {}),
      ...(fallback !== undefined ? { default: fallback } : {}),
      anyOf: [rest, { $ref: `#/definitions/${ENV_REFERENCE_DEFINITION}` }],
    };
  }
  return out;
}

let cached: JsonSchema | undefined;

/**
 * Keys a mapping at `path` (in the file, snake_case) may have, read from the JSON Schema so that
 * "unknown key" errors can list them. Empty when the path does not lead to a fixed mapping.
 */
export function allowedKeysAt(path: readonly (string | number)[]): string[] {
  cached ??= configJsonSchema();
  const root = cached;
  const definitions = (root.definitions ?? {}) as Record<string, JsonSchema>;
  const deref = (node: JsonSchema | undefined): JsonSchema | undefined => {
    let current = node;
    for (let hops = 0; current && hops < 10; hops++) {
      const ref = current.$ref;
      const allOf = current.allOf as JsonSchema[] | undefined;
      if (typeof ref === 'string') current = definitions[ref.replace('#/definitions/', '')];
      else if (allOf?.length === 1) current = allOf[0];
      else break;
    }
    return current;
  };
  const pick = (node: JsonSchema | undefined, want: 'object' | 'array'): JsonSchema | undefined => {
    const resolved = deref(node);
    if (!resolved) return undefined;
    if (resolved.type === want) return resolved;
    for (const option of (resolved.anyOf ?? resolved.oneOf ?? []) as JsonSchema[]) {
      const found = pick(option, want);
      if (found) return found;
    }
    return undefined;
  };
  let node: JsonSchema | undefined = root;
  for (const segment of path) {
    if (typeof segment === 'number') {
      node = pick(node, 'array')?.items as JsonSchema | undefined;
    } else {
      const object = pick(node, 'object');
      const properties = object?.properties as Record<string, JsonSchema> | undefined;
      node = properties?.[segment] ?? (object?.additionalProperties as JsonSchema | undefined);
    }
    if (!node) return [];
  }
  const object = pick(node, 'object');
  return Object.keys((object?.properties as Record<string, JsonSchema> | undefined) ?? {});
}
