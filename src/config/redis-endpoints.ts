import { z } from 'zod';
import type { RedisEndpoint, RedisTopology } from './redis-topology.js';

/**
 * The addresses of `redis.sentinels` and `redis.cluster.nodes`: `host:port`,
 * `{host, port}`, or the URLs managed Redis providers hand out, `redis://[user:password@]host:port`
 * and `rediss://...` (TLS). A URL's user, password and TLS are lifted into the topology by
 * agreeOnEndpoints: one client reaches every node with one set of them, so the entries must agree.
 * Messages never hold a password.
 */

/** One entry as written. `tls`, `username`, `password` come from a URL only. */
export interface RedisEndpointEntry extends RedisEndpoint {
  /** `rediss://` true, `redis://` false; absent for `host:port` and `{host, port}`. */
  readonly tls?: boolean;
  readonly username?: string;
  readonly password?: string;
}

const HOST_PORT = /^[A-Za-z0-9_.:[\]-]+:\d{1,5}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const ADDRESS_LIKE = /^\s*(?:[A-Za-z0-9_.:[\]-]+:\d{1,5}|[A-Za-z][A-Za-z0-9+.-]*:\/\/\S+)\s*$/;
const URL_FORM = 'redis://[user:password@]host:port';
const EXPECTED = `expected host:port, ${URL_FORM} or rediss://... (TLS), e.g. 10.0.0.5:26379`;

type Parsed = { ok: true; entry: RedisEndpointEntry } | { ok: false; message: string };

/** `text` as an address; `defaultPort` stands for a URL without one (6379, or 26379 for a sentinel). */
export function parseRedisEndpoint(text: string, defaultPort: number, role: EndpointRole): Parsed {
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (!HOST_PORT.test(text)) return { ok: false, message: EXPECTED };
    const colon = text.lastIndexOf(':');
    const port = Number(text.slice(colon + 1));
    if (port < 1 || port > 65_535) return { ok: false, message: `${EXPECTED} (a port from 1 to 65535)` };
    return { ok: true, entry: { host: text.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port } };
  }
  if (scheme !== 'redis' && scheme !== 'rediss') {
    return {
      ok: false,
      message: `${scheme}:// is not a Redis address: write ${URL_FORM} or rediss://...`,
    };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not quoted: the text may hold a password.
    return {
      ok: false,
      message: `is not a valid URL (a port from 1 to 65535, a password with / ? # @ written %2F %3F %23 %40): write ${URL_FORM}`,
    };
  }
  return entryOfUrl(url, scheme === 'rediss', defaultPort, role);
}

export type EndpointRole = 'cluster node' | 'sentinel';

function entryOfUrl(url: URL, tls: boolean, defaultPort: number, role: EndpointRole): Parsed {
  if (url.hostname === '') return { ok: false, message: `names no host: write ${URL_FORM}` };
  if (url.port === '0') return { ok: false, message: `${EXPECTED} (a port from 1 to 65535)` };
  if (url.search !== '' || url.hash !== '') {
    return {
      ok: false,
      message: `URL options (?... or #...) are not read here: drop them and set redis.tls, redis.username or redis.password instead`,
    };
  }
  const path = url.pathname;
  if (path !== '' && path !== '/' && !(role === 'cluster node' && path === '/0')) {
    return {
      ok: false,
      message:
        role === 'sentinel'
          ? 'a sentinel address takes no database: drop the /N and set redis.db'
          : 'a Redis Cluster has only database 0: drop the /N',
    };
  }
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return { ok: false, message: 'has a broken %-escape in its user or password' };
  }
  if (username !== '' && password === '') {
    return {
      ok: false,
      message: `names a user but no password: write redis://user:password@host:port (or redis://:password@host:port without an ACL user)`,
    };
  }
  const entry: RedisEndpointEntry = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? defaultPort : Number(url.port),
    tls,
    ...(username === '' ? {} : { username }),
    ...(password === '' ? {} : { password }),
  };
  return { ok: true, entry };
}

/**
 * The zod schema of one entry of `redis.sentinels` (role sentinel) or `redis.cluster.nodes`;
 * `object` is the `{host, port}` form (the config's own integer and non-empty rules).
 */
export function redisEndpointSchema<T extends z.ZodType<RedisEndpoint>>(role: EndpointRole, object: T) {
  const defaultPort = role === 'sentinel' ? 26_379 : 6_379;
  // The pattern only tells an address from other text (editors show it); parseRedisEndpoint
  // says what is wrong with one.
  const text = z
    .string()
    .regex(ADDRESS_LIKE, { error: EXPECTED })
    .meta({
      description: `host:port, ${URL_FORM}, or rediss://... for TLS (a URL's user, password and TLS apply to every node)`,
    });
  return z.union([text, object], { error: EXPECTED }).transform((value, ctx): RedisEndpointEntry => {
    if (typeof value !== 'string') return { host: value.host, port: value.port };
    const parsed = parseRedisEndpoint(value.trim(), defaultPort, role);
    if (parsed.ok) return parsed.entry;
    ctx.addIssue({ code: 'custom', message: parsed.message });
    return z.NEVER;
  });
}

/** What the section's own keys say, to be checked against the URLs. */
export interface EndpointSettings {
  /** `redis.tls` when written. */
  readonly tls: boolean | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** The keys' names in messages: `redis.username`/`redis.password`, or the sentinel_ ones. */
  readonly usernameKey: string;
  readonly passwordKey: string;
}

export interface EndpointProblem {
  /** The entry the problem is at. */
  readonly index: number;
  readonly message: string;
}

export interface EndpointAgreement {
  /** TLS as the URLs and `redis.tls` say (false when neither does). */
  readonly tls: boolean;
  readonly username?: string;
  readonly password?: string;
  readonly problems: readonly EndpointProblem[];
}

const schemeOf = (tls: boolean) => (tls ? 'rediss:// (TLS)' : 'redis:// (no TLS)');

/**
 * The TLS and credentials a list of entries (`list`: `redis.cluster.nodes` or `redis.sentinels`)
 * and the section's keys agree on, or the entries that disagree. An entry without credentials or
 * scheme (`host:port`, a URL without `user:password@`) takes those of the others, as the nodes a
 * cluster client discovers do.
 */
export function agreeOnEndpoints(
  entries: readonly RedisEndpointEntry[],
  list: string,
  settings: EndpointSettings,
): EndpointAgreement {
  const problems: EndpointProblem[] = [];
  const tlsFrom = entries.findIndex((entry) => entry.tls !== undefined);
  const urlTls = entries[tlsFrom]?.tls;
  const credentialsFrom = entries.findIndex((entry) => entry.password !== undefined);
  const first = entries[credentialsFrom];
  entries.forEach((entry, index) => {
    if (entry.tls !== undefined && urlTls !== undefined && entry.tls !== urlTls) {
      problems.push({
        index,
        message: `this address is ${schemeOf(entry.tls)} but ${list}.${tlsFrom} is ${schemeOf(urlTls)}: every node is reached the same way, so write rediss:// for all of them (TLS) or redis:// for all`,
      });
    } else if (entry.tls !== undefined && settings.tls !== undefined && entry.tls !== settings.tls) {
      problems.push({
        index,
        message: `this address is ${schemeOf(entry.tls)} but redis.tls is ${settings.tls}: drop redis.tls (the URLs say it) or make them agree`,
      });
    }
    if (entry.password === undefined || first === undefined) return;
    if (
      index !== credentialsFrom &&
      (entry.username !== first.username || entry.password !== first.password)
    ) {
      problems.push({
        index,
        message: `this URL's user or password differs from that of ${list}.${credentialsFrom}: one client reaches every node with the same credentials; give the same user:password in every URL, or once in ${settings.usernameKey} and ${settings.passwordKey}`,
      });
    }
    const clash = [
      settings.password !== undefined && entry.password !== settings.password && settings.passwordKey,
      settings.username !== undefined && entry.username !== settings.username && settings.usernameKey,
    ].filter((key): key is string => typeof key === 'string');
    if (clash.length > 0) {
      problems.push({
        index,
        message: `this URL's credentials differ from ${clash.join(' and ')}: give them in one place (the URLs, or the keys)`,
      });
    }
  });
  const username = settings.username ?? first?.username;
  const password = settings.password ?? first?.password;
  return {
    tls: settings.tls ?? urlTls ?? false,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    problems,
  };
}

/** The keys of `redis:` that say where Redis is and how to reach it, as validated. */
export interface RedisAddressFields {
  readonly url?: string | undefined;
  readonly sentinels?: readonly RedisEndpointEntry[] | undefined;
  readonly name?: string | undefined;
  readonly cluster?: { readonly nodes: readonly RedisEndpointEntry[] } | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly sentinel_username?: string | undefined;
  readonly sentinel_password?: string | undefined;
  readonly tls?: boolean | undefined;
  readonly db: number;
}

/**
 * The TLS and credentials that the addresses' URLs and the section's keys agree on, or the entries
 * that disagree. The sentinels' URLs carry the sentinels' own credentials.
 */
function endpointAgreement(r: RedisAddressFields): (EndpointAgreement & { path: string[] }) | undefined {
  if (r.sentinels) {
    return {
      path: ['sentinels'],
      ...agreeOnEndpoints(r.sentinels, 'redis.sentinels', {
        tls: r.tls,
        username: r.sentinel_username,
        password: r.sentinel_password,
        usernameKey: 'redis.sentinel_username',
        passwordKey: 'redis.sentinel_password',
      }),
    };
  }
  if (r.cluster) {
    return {
      path: ['cluster', 'nodes'],
      ...agreeOnEndpoints(r.cluster.nodes, 'redis.cluster.nodes', {
        tls: r.tls,
        username: r.username,
        password: r.password,
        usernameKey: 'redis.username',
        passwordKey: 'redis.password',
      }),
    };
  }
  return undefined;
}

/** The topology the section describes, with the URLs' TLS and credentials lifted into it. */
export function redisTopologyOf(r: RedisAddressFields): RedisTopology {
  const agreed = endpointAgreement(r);
  const hostPort = ({ host, port }: RedisEndpoint): RedisEndpoint => ({ host, port });
  if (r.sentinels) {
    return {
      kind: 'sentinel',
      sentinels: r.sentinels.map(hostPort),
      name: r.name ?? '',
      ...(r.username === undefined ? {} : { username: r.username }),
      ...(r.password === undefined ? {} : { password: r.password }),
      ...(agreed?.username === undefined ? {} : { sentinelUsername: agreed.username }),
      ...(agreed?.password === undefined ? {} : { sentinelPassword: agreed.password }),
      tls: agreed?.tls ?? false,
      db: r.db,
    };
  }
  if (r.cluster) {
    return {
      kind: 'cluster',
      nodes: r.cluster.nodes.map(hostPort),
      ...(agreed?.username === undefined ? {} : { username: agreed.username }),
      ...(agreed?.password === undefined ? {} : { password: agreed.password }),
      tls: agreed?.tls ?? false,
    };
  }
  return { kind: 'single', url: r.url ?? 'redis://127.0.0.1:6379' };
}

/** The entries whose TLS or credentials disagree, at their paths under `redis`. */
export function redisEndpointProblems(
  r: RedisAddressFields,
): { path: (string | number)[]; message: string }[] {
  const agreed = endpointAgreement(r);
  if (!agreed) return [];
  return agreed.problems.map((problem) => ({
    path: [...agreed.path, problem.index],
    message: problem.message,
  }));
}
