import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  LineCounter,
  type Pair,
  parseDocument,
  visit,
  type YAMLMap,
} from 'yaml';
import { z } from 'zod';
import { isHttpUrl } from '../base/is-http-url.js';
import type { BusinessOptions } from '../emulator/emulator-options.js';
import { CliError } from './cli-error.js';

/**
 * `convo-bridge emulator --businesses FILE`: the businesses an emulator hosts, as YAML or JSON.
 * Secrets may come from the environment (`${VAR}`), so the file can be
 * committed without them; a seed path is relative to the file.
 *
 *   businesses:
 *     - id: toko-a
 *       secret: ${TOKO_A_SECRET}
 *       name: Toko A
 *       webhook_url: http://127.0.0.1:8080/webhooks/toko-a
 *       webhook_secret: ${TOKO_A_WEBHOOK_SECRET}    # default: the secret
 *       handover_webhook_url: http://127.0.0.1:8080/handover/toko-a
 *       api_feature: false                          # default true
 *       seed: seeds/toko-a.yaml
 *
 * Every problem is reported as `file:line:column: message`; no message shows a value (they are
 * mostly secrets).
 */
const text = z.string().trim().min(1, { error: 'must not be empty' });
const url = z.string().refine(isHttpUrl, { error: 'must be an http(s) URL' });

const EntrySchema = z
  .strictObject({
    id: text,
    secret: z.string().min(1, { error: 'must not be empty' }),
    name: text.optional(),
    webhook_url: url.optional(),
    webhook_secret: z.string().min(1, { error: 'must not be empty' }).optional(),
    handover_webhook_url: url.optional(),
    handover_webhook_secret: z.string().min(1, { error: 'must not be empty' }).optional(),
    api_feature: z.boolean().optional(),
    seed: text.optional(),
  })
  .superRefine((entry, ctx) => {
    for (const prefix of ['webhook', 'handover_webhook'] as const) {
      if (entry[`${prefix}_secret`] !== undefined && entry[`${prefix}_url`] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [`${prefix}_secret`],
          message: `${prefix}_secret needs ${prefix}_url (where those calls go)`,
        });
      }
    }
  });

const FileSchema = z.strictObject({
  businesses: z.array(EntrySchema).min(1, { error: 'list at least one business' }),
});

/** One business read from the file, and where it is (for messages about it). */
export interface FileBusiness {
  readonly options: BusinessOptions;
  /** `file:line:column` of its entry. */
  readonly where: string;
}

interface Place {
  readonly line: number;
  readonly column: number;
}

class FileProblems {
  readonly lines: string[] = [];
  constructor(
    private readonly file: string,
    private readonly counter: LineCounter,
  ) {}

  at(offset: number): Place {
    const { line, col } = this.counter.linePos(offset);
    return { line, column: col };
  }

  add(offset: number, message: string): void {
    const { line, column } = this.at(offset);
    this.lines.push(`${this.file}:${line}:${column}: ${message}`);
  }

  fail(): never {
    const count = this.lines.length === 1 ? '1 problem' : `${this.lines.length} problems`;
    throw new CliError(
      `--businesses file ${this.file} is invalid (${count}); fix these and start again:\n${this.lines.join('\n')}`,
    );
  }
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Tags refused, `${VAR}` put in from `env` (unset ones reported by name, never by value). */
function prepare(doc: Document, problems: FileProblems, env: NodeJS.ProcessEnv): void {
  visit(doc, {
    Node(_key, node) {
      if (node.tag !== undefined) {
        problems.add(node.range?.[0] ?? 0, 'YAML tags are not allowed: write a plain value instead');
      }
      if (!isScalar(node) || typeof node.value !== 'string' || !node.value.includes('${')) return;
      node.value = node.value.replace(VARIABLE, (whole, name: string) => {
        const value = env[name];
        if (value === undefined || value === '') {
          problems.add(node.range?.[0] ?? 0, `\${${name}} is not set: export ${name}, or write the value`);
          return whole;
        }
        return value;
      });
    },
  });
}

function rangeStart(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

function pairOf(map: YAMLMap, key: PropertyKey): Pair | undefined {
  return map.items.find((item) => isScalar(item.key) && item.key.value === key);
}

/** Where `path` is in the document (the deepest part that exists); with `key`, that key of the mapping there. */
function offsetOf(doc: Document, path: readonly PropertyKey[], key?: string): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = pairOf(node, segment);
      if (!pair) return offset;
      node = pair.value;
      offset = rangeStart(pair.value) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = rangeStart(node) ?? offset;
    } else {
      return offset;
    }
  }
  if (key !== undefined && isMap(node)) offset = rangeStart(pairOf(node, key)?.key) ?? offset;
  return offset;
}

/** A zod issue in words: the key it is about, and what is wrong (never the value). */
function describeIssue(issue: z.core.$ZodIssue): { path: PropertyKey[]; key?: string; message: string }[] {
  const path = [...issue.path];
  const label = path.filter((part) => typeof part === 'string').at(-1);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path,
      key,
      message: `unknown key ${JSON.stringify(key)}: a business takes id, secret, name, webhook_url, webhook_secret, handover_webhook_url, handover_webhook_secret, api_feature and seed`,
    }));
  }
  if (issue.code === 'invalid_type' && issue.input === undefined && typeof label === 'string') {
    return [{ path: path.slice(0, -1), message: `${label} is missing` }];
  }
  return [{ path, message: typeof label === 'string' ? `${label}: ${issue.message}` : issue.message }];
}

/**
 * A business's `webhook` and `handoverWebhook` options from an address and a secret each (flags or
 * a businesses file); absent when no address is given, the secret absent when none is given.
 */
export function webhookTargets(
  url: string | undefined,
  secret: string | undefined,
  handoverUrl: string | undefined,
  handoverSecret: string | undefined,
): Pick<BusinessOptions, 'webhook' | 'handoverWebhook'> {
  const target = (at: string, key: string | undefined) =>
    key === undefined ? { url: at } : { url: at, secret: key };
  return {
    ...(url === undefined ? {} : { webhook: target(url, secret) }),
    ...(handoverUrl === undefined ? {} : { handoverWebhook: target(handoverUrl, handoverSecret) }),
  };
}

function toBusinessOptions(entry: z.output<typeof EntrySchema>, baseDir: string): BusinessOptions {
  return {
    businessId: entry.id,
    secret: entry.secret,
    ...(entry.name === undefined ? {} : { businessName: entry.name }),
    ...webhookTargets(
      entry.webhook_url,
      entry.webhook_secret,
      entry.handover_webhook_url,
      entry.handover_webhook_secret,
    ),
    ...(entry.api_feature === undefined ? {} : { apiFeature: entry.api_feature }),
    ...(entry.seed === undefined ? {} : { seedFile: resolve(baseDir, entry.seed) }),
  };
}

/** Reads and validates a `--businesses` file; throws a CliError listing every problem with its place. */
export async function loadBusinessesFile(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<FileBusiness[]> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new CliError(`cannot read --businesses file ${file} (${code}): check the path`, { cause: error });
  }
  const counter = new LineCounter();
  // YAML 1.2 is a superset of JSON, so one parser reads both.
  const doc = parseDocument(source, {
    lineCounter: counter,
    prettyErrors: false,
    strict: true,
    uniqueKeys: true,
  });
  const problems: FileProblems = new FileProblems(file, counter);
  // The code, not the message: yaml quotes the offending source in some messages, and here that
  // is likely a secret.
  for (const error of doc.errors)
    problems.add(error.pos[0], `YAML syntax error (${error.code.toLowerCase().replaceAll('_', ' ')})`);
  if (problems.lines.length > 0) problems.fail();
  prepare(doc, problems, env);
  if (problems.lines.length > 0) problems.fail();
  let value: unknown;
  try {
    // Alias expansion is bounded (a "billion laughs" file fails here instead of eating memory).
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new CliError(`--businesses file ${file}: aliases expand too much; write the values out`, {
      cause: error,
    });
  }
  if (value === null || value === undefined) {
    problems.add(
      0,
      'the file is empty: write a businesses: list (see docs/emulator.md, "Several businesses")',
    );
    problems.fail();
  }
  const parsed = FileSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      for (const problem of describeIssue(issue))
        problems.add(offsetOf(doc, problem.path, problem.key), problem.message);
    }
    problems.fail();
  }
  const baseDir = dirname(resolve(file));
  return parsed.data.businesses.map((entry, index) => {
    const { line, column } = problems.at(offsetOf(doc, ['businesses', index]));
    return { options: toBusinessOptions(entry, baseDir), where: `${file}:${line}:${column}` };
  });
}
