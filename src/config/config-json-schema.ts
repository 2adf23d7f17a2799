import { z } from 'zod';
import { SINGLE_BUSINESS_ID } from '../events/business-naming.js';
import {
  BUSINESS_ID_PATTERN,
  BUSINESS_ID_RULE,
  BUSINESS_RECEIVER_KEYS,
  BUSINESS_SECTIONS,
} from './businesses.js';
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
  const root = withBusinesses(allowEnvReferences(schema) as JsonSchema);
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

/**
 * `businesses:` and `businesses_dir:`. With either, the top level holds the defaults of
 * every business and need not be complete (no base_url or credentials, say): the sections a
 * business may set lose their `required` at the top level, and get it back through `else` in a
 * config without businesses, which must be complete as always.
 */
function withBusinesses(root: JsonSchema): JsonSchema {
  const full = root.properties as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = { ...full };
  const skeleton: Record<string, JsonSchema> = {};
  for (const section of BUSINESS_SECTIONS) {
    const schema = full[section];
    if (schema === undefined) continue;
    properties[section] = mergeable(schema, [section], true);
    const required = requiredOf(schema, [section]);
    if (required) skeleton[section] = required;
  }
  const entry = businessEntrySchema(full);
  properties.businesses = {
    description:
      'The businesses this bridge serves, each with its own credentials, webhook path and secrets, and (optionally) rules and settings; the top level holds their defaults. Mappings merge over the defaults, lists replace them.',
    type: 'array',
    minItems: 1,
    items: entry,
  };
  properties.businesses_dir = {
    description:
      'A directory (relative to this file) of one YAML file per business, with the keys of a businesses entry; id defaults to the file name without .yaml.',
    type: 'string',
    minLength: 1,
  };
  const { required, ...rest } = root;
  return {
    ...rest,
    properties,
    if: { anyOf: [{ required: ['businesses'] }, { required: ['businesses_dir'] }] },
    else: { ...(required === undefined ? {} : { required }), properties: skeleton },
  };
}

/** One business: its id and the sections it may set, every key optional (the rest comes from the top level). */
function businessEntrySchema(full: Record<string, JsonSchema>): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    id: {
      type: 'string',
      pattern: BUSINESS_ID_PATTERN.source,
      description: `The business's id: ${BUSINESS_ID_RULE}. In a businesses_dir file, the file name when left out.`,
    },
    takes_over: {
      type: 'string',
      enum: [SINGLE_BUSINESS_ID],
      description:
        'takes_over: default: this business keeps the data of a config without businesses: (its Redis keys, event keys and jobs: once-marks, dedupe, order, timers, dead letters, records), so that growing from one business to several, and back, repeats and holds nothing. At most one business says it.',
    },
  };
  for (const section of BUSINESS_SECTIONS) {
    const schema = full[section];
    if (schema !== undefined) properties[section] = mergeable(schema, [section], false);
  }
  const receiver = properties.receiver;
  if (receiver?.properties) {
    const keys = receiver.properties as Record<string, JsonSchema>;
    receiver.properties = Object.fromEntries(
      BUSINESS_RECEIVER_KEYS.flatMap((key) => (keys[key] ? [[key, keys[key]]] : [])),
    );
    receiver.description =
      'Only path (default /webhooks/<id>) and secrets (default: this business platform.auth.secret); the rest of receiver is shared.';
  }
  return { type: 'object', properties, additionalProperties: false };
}

/** Mappings merge, lists and values replace (merge-business.ts), so within merged mappings nothing is required. */
function mergeable(node: JsonSchema, path: readonly string[], keepDefaults: boolean): JsonSchema {
  const { required: _required, default: fallback, ...rest } = node;
  const out: JsonSchema = {
    ...rest,
    ...(keepDefaults && fallback !== undefined ? { default: fallback } : {}),
  };
  if (node.type !== 'object' || isReplaced(path)) return out;
  if (node.properties) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties as Record<string, JsonSchema>).map(([key, child]) => [
        key,
        mergeable(child, [...path, key], keepDefaults),
      ]),
    );
  }
  if (node.additionalProperties !== null && typeof node.additionalProperties === 'object') {
    out.additionalProperties = mergeable(
      node.additionalProperties as JsonSchema,
      [...path, '*'],
      keepDefaults,
    );
  }
  return out;
}

/** What `mergeable` took away: the `required` lists of the merged mappings, as a schema. */
function requiredOf(node: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  if (node.type !== 'object' || isReplaced(path)) return undefined;
  const out: JsonSchema = {};
  if (Array.isArray(node.required) && node.required.length > 0) out.required = node.required;
  const properties: Record<string, JsonSchema> = {};
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    const inner = requiredOf(child, [...path, key]);
    if (inner) properties[key] = inner;
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (node.additionalProperties !== null && typeof node.additionalProperties === 'object') {
    const inner = requiredOf(node.additionalProperties as JsonSchema, [...path, '*']);
    if (inner) out.additionalProperties = inner;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** business_hours.weekly replaces rather than merges (its keys are day ranges). */
function isReplaced(path: readonly string[]): boolean {
  return path.join('.') === 'business_hours.weekly';
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
