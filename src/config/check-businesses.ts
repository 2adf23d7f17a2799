import type { BusinessEntry } from './business-entries.js';
import { issueAt } from './business-entries.js';
import type { ConfigPath } from './config-document.js';
import { type ConfigIssue, formatConfigIssue } from './config-error.js';
import type { BridgeConfig } from './config-schema.js';
import { isPlainObject, type PlainObject, provenanceOf } from './merge-business.js';
import type { ConfigSource } from './read-config-source.js';

/**
 * What no single business can show: two businesses with one id, one webhook path, or one webhook
 * secret (a webhook signed for one would be accepted by the other: keeping businesses apart starts
 * at the door). Secrets are compared, never printed.
 */

/** A business whose merged config is valid. */
export interface ValidBusiness {
  readonly entry: BusinessEntry;
  readonly config: BridgeConfig;
}

export interface CrossCheckContext {
  readonly top: ConfigSource;
  /** The top level as every business inherits it. */
  readonly defaults: PlainObject;
}

/** A place in one of the files. */
interface Place {
  readonly source: ConfigSource;
  readonly path: ConfigPath;
}

export function crossCheckBusinesses(
  entries: readonly BusinessEntry[],
  valid: readonly ValidBusiness[],
  context: CrossCheckContext,
): ConfigIssue[] {
  return [...duplicateIds(entries), ...duplicatePaths(valid), ...sharedSecrets(valid, context)];
}

function duplicateIds(entries: readonly BusinessEntry[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const first = new Map<string, BusinessEntry>();
  for (const entry of entries) {
    if (entry.id === undefined) continue;
    const earlier = first.get(entry.id);
    if (!earlier) {
      first.set(entry.id, entry);
      continue;
    }
    const { source, path } = idPlace(entry);
    issues.push(
      issueAt(
        source,
        path,
        `business id ${JSON.stringify(entry.id)} is used twice (also at ${where(idPlace(earlier))}): give each business its own id`,
      ),
    );
  }
  return issues;
}

/** Express matches paths without regard to case or a trailing slash; so does this check. */
function samePathKey(path: string): string {
  return path.toLowerCase().replace(/\/+$/, '') || '/';
}

function duplicatePaths(valid: readonly ValidBusiness[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const first = new Map<string, ValidBusiness>();
  for (const business of valid) {
    const key = samePathKey(business.config.receiver.path);
    const earlier = first.get(key);
    if (!earlier) {
      first.set(key, business);
      continue;
    }
    const { entry } = business;
    // Two businesses of one id share /webhooks/<id>: the id is the problem, already reported.
    if (entry.id === earlier.entry.id) continue;
    const written = writesReceiverKey(entry, 'path');
    const { source, path } = written
      ? { source: entry.source, path: [...entry.base, 'receiver', 'path'] }
      : idPlace(entry);
    const own = written ? '' : ' (it sets no receiver.path, so it takes /webhooks/<id>)';
    issues.push(
      issueAt(
        source,
        path,
        `${entry.label}: its webhook path ${business.config.receiver.path}${own} is also the path of ${earlier.entry.label} (${where(pathPlace(earlier))}): give each business its own receiver.path`,
      ),
    );
  }
  return issues;
}

function sharedSecrets(valid: readonly ValidBusiness[], context: CrossCheckContext): ConfigIssue[] {
  const holders = new Map<string, { business: ValidBusiness; place: Place }[]>();
  for (const business of valid) {
    business.config.receiver.secrets.forEach((secret, index) => {
      const list = holders.get(secret) ?? [];
      // A business listing one secret twice shares it with nobody.
      if (list.some((h) => h.business === business)) return;
      list.push({ business, place: secretPlace(business, index, context) });
      holders.set(secret, list);
    });
  }
  const issues: ConfigIssue[] = [];
  for (const list of holders.values()) {
    if (list.length < 2) continue;
    // Grouped by where the secret is written: many businesses can inherit one from the top level.
    const byPlace = new Map<string, string[]>();
    for (const h of list) {
      const at = where(h.place);
      byPlace.set(at, [...(byPlace.get(at) ?? []), h.business.entry.name]);
    }
    const groups = [...byPlace].map(([at, names]) => `${listNames(names)} (${at})`);
    const shown =
      groups.length > 5
        ? `${groups.slice(0, 5).join(', ')} and ${groups.length - 5} more places`
        : groups.join(', ');
    const defaulted = list.some((h) => h.business.config.receiver.secretsDefaulted)
      ? '; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets'
      : '';
    const message = `the same webhook secret is accepted by businesses ${shown}: a webhook meant for one would be accepted by the other; give each business its own receiver.secrets${defaulted}`;
    const seen = new Set<string>();
    for (const { place } of list) {
      const issue = issueAt(place.source, place.path, message);
      const key = `${issue.file}:${issue.line}:${issue.column}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

function writesReceiverKey(entry: BusinessEntry, key: 'path' | 'secrets'): boolean {
  return isPlainObject(entry.value.receiver) && Object.hasOwn(entry.value.receiver, key);
}

/** Where a business's id is written (or, without one, where its entry or file starts). */
function idPlace(entry: BusinessEntry): Place {
  return { source: entry.source, path: [...entry.base, 'id'] };
}

function pathPlace(business: ValidBusiness): Place {
  const { entry } = business;
  return writesReceiverKey(entry, 'path')
    ? { source: entry.source, path: [...entry.base, 'receiver', 'path'] }
    : idPlace(entry);
}

/** Where the secret is written: in receiver.secrets, or (the default) where platform.auth.secret is. */
function secretPlace(business: ValidBusiness, index: number, context: CrossCheckContext): Place {
  const { entry } = business;
  if (!business.config.receiver.secretsDefaulted) {
    return { source: entry.source, path: [...entry.base, 'receiver', 'secrets', index] };
  }
  const secretPath = ['platform', 'auth', 'secret'];
  const from = provenanceOf(secretPath, context.defaults, entry.value);
  return from.from === 'defaults'
    ? { source: context.top, path: secretPath }
    : { source: entry.source, path: [...entry.base, ...secretPath] };
}

function listNames(names: readonly string[]): string {
  return names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
}

function where(place: Place): string {
  const issue = issueAt(place.source, place.path, '');
  return formatConfigIssue(issue).replace(/: $/, '');
}
