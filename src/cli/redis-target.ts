import { type Command, Option } from 'commander';
import { z } from 'zod';
import { describeError } from '../base/errors.js';
import { redactUrl } from '../base/redact-url.js';
import { BUSINESS_ID_RULE } from '../config/businesses.js';
import { ConfigError } from '../config/config-error.js';
import type { BridgeConfig } from '../config/config-schema.js';
import type { Env } from '../config/interpolate-env.js';
import { loadConfig } from '../config/load-config.js';
import { checkRedisUrl, databaseOfRedisUrl } from '../config/redis-url.js';
import { DEFAULT_CONFIG_PATH, resolveConfigPath } from '../config/resolve-config-path.js';
import { BUSINESS_ID_PATTERN } from '../events/business-id.js';
import {
  type BusinessNaming,
  namingOfTag,
  SINGLE_BUSINESS_ID,
  SINGLE_BUSINESS_NAMING,
} from '../events/business-naming.js';
import { type KeyLayout, layoutFor } from '../queue/key-layout.js';
import { storedKeyLayout } from '../queue/layout-record.js';
import { DatabaseGuardedRedis, type RedisDatabaseError } from '../redis/database-guard.js';
import { redisAddress } from '../redis/redis-address.js';
import type { RedisClient } from '../redis/redis-client.js';
import {
  createRedisClient,
  describeTopology,
  type RedisTopology,
  singleRedis,
} from '../redis/redis-connection.js';
import { primaryConnections } from '../redis/scan-keys.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { pickBusiness } from './pick-business.js';

export { redisAddress };

/** Which Redis and key prefix an operator command works on, and where that came from. */
export interface RedisTarget {
  /** The Redis (one URL, Sentinel or Cluster) and, for messages, where it is. */
  topology: RedisTopology;
  address: string;
  /** The database the commands read and write (a URL's /N, redis.db; 0 with a cluster). */
  database: number;
  prefix: string;
  /** In words, for messages: "config/bridge.yaml (redis.url)", "... (redis.cluster.nodes)", "--redis-url". */
  source: string;
  /** The bridge config, when the target came from one (`timers list` reads its windows and zone): the business's. */
  config?: BridgeConfig;
  /**
   * The business whose entries to read (`--business`, or the config's only one), and the naming of
   * its data (events/business-naming.ts): whose keys are read.
   */
  business: string;
  naming: BusinessNaming;
}

export interface RedisTargetFlags {
  config?: string | undefined;
  redisUrl?: string | undefined;
  prefix?: string | undefined;
  business?: string | undefined;
}

const FlagsSchema = z.object({
  config: z.string().min(1).optional(),
  redisUrl: z
    .string()
    .superRefine((text, ctx) => {
      const checked = checkRedisUrl(text);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: `--redis-url ${checked.message}` });
    })
    .optional(),
  prefix: z
    .string()
    .regex(
      /^[A-Za-z0-9_.-]{1,64}$/,
      '--prefix must be 1-64 letters, digits, "_", "." or "-" (the default is "cb")',
    )
    .optional(),
  business: z
    .string()
    .regex(BUSINESS_ID_PATTERN, `--business takes a business id (${BUSINESS_ID_RULE})`)
    .optional(),
});

/**
 * The connection options of every command that works on a running bridge's Redis (`dlq`,
 * `quarantine`): declared once on the parent command, so they are accepted before or after the
 * subcommand (`dlq --config F list` and `dlq list --config F`).
 */
export function addRedisTargetOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '-c, --config <file>',
        `bridge config whose redis.url and redis.prefix to use (default: ${DEFAULT_CONFIG_PATH}, then $CONVO_BRIDGE_CONFIG)`,
      ),
    )
    .addOption(new Option('--redis-url <url>', 'Redis URL; overrides the config (else $REDIS_URL)'))
    .addOption(new Option('--prefix <prefix>', "key prefix; overrides the config's redis.prefix"))
    .addOption(
      new Option(
        '--business <id>',
        'with businesses: whose entries (required when the config has several; without a config, the id as written)',
      ),
    );
}

/**
 * Resolves the Redis to use, the same way for every operator command:
 * 1. `--config FILE` (or, as for `start`, config/bridge.yaml, then $CONVO_BRIDGE_CONFIG): its
 *    redis.url and redis.prefix, with `--redis-url`/`--prefix` overriding them when also given;
 * 2. without a config: `--redis-url` (or $REDIS_URL) and `--prefix` (default `cb`).
 * A config that was named but cannot be loaded is an error, never silently skipped.
 */
export async function resolveRedisTarget(
  rawFlags: RedisTargetFlags,
  env: Env = process.env,
  exists?: (path: string) => boolean,
  /** `any`: a command that works on every business at once (reshard): no --business, none picked. */
  businesses: 'one' | 'any' = 'one',
): Promise<RedisTarget> {
  const parsed = FlagsSchema.safeParse(rawFlags);
  if (!parsed.success) {
    throw new CliError(parsed.error.issues.map((issue) => issue.message).join('; '));
  }
  const flags = parsed.data;
  if (businesses === 'any' && flags.business !== undefined) {
    throw new CliError(
      '--business does not apply here: this command works on every business at once; leave it out',
    );
  }
  const configPath = resolveConfigPath(flags.config, env, exists);
  if (configPath !== undefined) {
    let loaded: Awaited<ReturnType<typeof loadConfig>>;
    try {
      // Only redis.* is used here: the platform's and receiver's secrets need not be set.
      loaded = await loadConfig(configPath, { env, allowMissingEnv: true });
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message, { cause: error });
      throw error;
    }
    const missing = loaded.missingEnv.find((variable) => variable.path[0] === 'redis');
    if (missing && flags.redisUrl === undefined) {
      throw new CliError(
        `${configPath}:${missing.line}:${missing.column}: redis.${missing.path.slice(1).join('.')} uses \${${missing.name}}, which is not set: set it as for start, or pass --redis-url`,
      );
    }
    const topology =
      flags.redisUrl === undefined ? loaded.config.redis.topology : singleRedis(flags.redisUrl);
    const business = businesses === 'one' ? pickBusiness(loaded, flags.business) : undefined;
    return {
      topology,
      address: describeTopology(topology),
      database: databaseOf(topology),
      prefix: flags.prefix ?? loaded.config.redis.prefix,
      source:
        flags.redisUrl === undefined
          ? `${configPath} (redis.${addressKey(topology)})`
          : `--redis-url (over ${configPath})`,
      config: business?.config ?? loaded.config,
      business: business?.id ?? SINGLE_BUSINESS_ID,
      naming: business?.naming ?? SINGLE_BUSINESS_NAMING,
    };
  }
  const redisUrl = flags.redisUrl ?? env.REDIS_URL;
  if (redisUrl === undefined || redisUrl === '') {
    throw new CliError(
      `no Redis given: pass --config FILE (its redis.url and redis.prefix are used), create ${DEFAULT_CONFIG_PATH}, or pass --redis-url redis://HOST:PORT`,
    );
  }
  const checked = checkRedisUrl(redisUrl);
  if (!checked.ok) throw new CliError(`$REDIS_URL ${checked.message}`);
  return {
    topology: singleRedis(redisUrl),
    address: redisAddress(redisUrl),
    database: checked.database,
    prefix: flags.prefix ?? 'cb',
    source: flags.redisUrl === undefined ? '$REDIS_URL' : '--redis-url',
    // Without a config, --business names a business of its own naming; none: the single-business data.
    business: flags.business ?? SINGLE_BUSINESS_ID,
    naming: namingOfTag(flags.business ?? ''),
  };
}

export interface ConnectOptions {
  /** Give up after this long (refused connections fail at once; silent hosts take this long). */
  timeoutMs?: number;
}

/**
 * Connects once, without reconnecting: an operator command either reaches Redis within a few
 * seconds or exits 2 naming the address. The caller must `disconnect()` (runWithRedis does).
 */
export async function connectRedisTarget(
  target: RedisTarget,
  options: ConnectOptions = {},
): Promise<RedisClient> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const redis = createRedisClient(target.topology, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    connectionName: 'convo-bridge:cli',
    // disconnect() ends the socket and destroys it only after this long if the server has not
    // closed its side: ioredis's 2 s (a timer that holds the process) kept a command that had
    // printed its answer or error alive for 2-4 s, longest with a Redis that never answers.
    // Every command is awaited before the disconnect, so nothing is left to flush.
    disconnectTimeout: 50,
  });
  // The first socket error says why (ECONNREFUSED, ENOTFOUND...); connect() only says "closed".
  let firstError: unknown;
  redis.on('error', (error) => {
    firstError ??= error;
  });
  // A cluster's own error is "Failed to refresh slots cache."; a node's says why (WRONGPASS...).
  redis.on('node error', (error: unknown) => {
    if (firstError === undefined || /slots cache/.test(describeError(firstError))) firstError = error;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.connect().then(() => redis.ping()),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    if (target.topology.kind === 'single' && /cluster_enabled:1/.test(await redis.info('cluster'))) {
      // A node of a Redis Cluster given as a URL (`--redis-url`): talk to the whole cluster.
      redis.disconnect();
      return await connectRedisTarget({ ...target, topology: clusterOfUrl(target.topology.url) }, options);
    }
    return redis;
  } catch (error) {
    if (error instanceof CliError) throw error;
    redis.disconnect();
    // The refusal closes the connection (ioredis's ready check fails): it says why.
    const refused = redis instanceof DatabaseGuardedRedis ? redis.databaseRefused : undefined;
    if (refused !== undefined) throw databaseRefused(refused, target);
    const reason = describeError(firstError ?? error);
    const hint = /WRONGPASS|NOAUTH|AUTH failed|invalid password/i.test(reason)
      ? `give the user and password Redis expects (${
          target.topology.kind === 'single'
            ? 'redis://user:password@host:port'
            : `in the URLs of redis.${addressKey(target.topology)}, or redis.username/password${target.topology.kind === 'sentinel' ? ' and sentinel_username/sentinel_password' : ''}`
        })`
      : `start Redis there, or point redis.${addressKey(target.topology)} or --redis-url at the one the bridge uses`;
    throw new CliError(
      `cannot reach Redis at ${target.address} (from ${target.source}): ${reason}; ${hint}`,
      { exitCode: EXIT.unavailable, code: 'REDIS_UNAVAILABLE', cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}

/** The database a topology's commands use. */
function databaseOf(topology: RedisTopology): number {
  if (topology.kind === 'sentinel') return topology.db;
  return topology.kind === 'single' ? databaseOfRedisUrl(topology.url) : 0;
}

/**
 * Where an operator command reads, for its header and its empty hint: the address and the
 * database (a command that read another database than meant would just say "no entries").
 */
export function describeWhere(target: Pick<RedisTarget, 'address' | 'database' | 'topology'>): string {
  return target.topology.kind === 'cluster' ? target.address : `${target.address} db ${target.database}`;
}

/** A refused database, named as the user gave it: the URL (never its password) or redis.db. */
function databaseRefused(error: RedisDatabaseError, target: RedisTarget): CliError {
  const given =
    target.topology.kind === 'single'
      ? `${redactUrl(target.topology.url)} from ${target.source}`
      : target.source;
  return new CliError(`${given}: ${error.message}`, {
    exitCode: EXIT.invalidInput,
    code: error.code,
    cause: error,
  });
}

/** The config key that names the topology's addresses, for messages. */
function addressKey(topology: RedisTopology): string {
  if (topology.kind === 'sentinel') return 'sentinels';
  return topology.kind === 'cluster' ? 'cluster.nodes' : 'url';
}

/** The cluster a node's URL belongs to, with the URL's credentials and TLS. */
function clusterOfUrl(url: string): RedisTopology {
  const parsed = new URL(url);
  return {
    kind: 'cluster',
    nodes: [{ host: parsed.hostname, port: Number(parsed.port || '6379') }],
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * The queue shards of the target: as its config says (same as the bridge's), or, without a
 * config, as the Redis recorded them (queue/layout-record.ts).
 */
export async function targetLayout(redis: RedisClient, target: RedisTarget): Promise<KeyLayout> {
  if (target.config && target.prefix === target.config.redis.prefix) {
    return layoutFor({ ...target.config.redis, topology: target.topology });
  }
  return storedKeyLayout(redis, target.prefix);
}

/** Runs `work` with a connection to the target and always closes it, so the command exits. */
export async function runWithRedis<T>(
  target: RedisTarget,
  work: (redis: RedisClient, layout: KeyLayout) => Promise<T>,
): Promise<T> {
  const redis = await connectRedisTarget(target);
  try {
    return await work(redis, (await targetLayout(redis, target)).forNaming(target.naming));
  } finally {
    redis.disconnect();
  }
}

/**
 * Other prefixes under which `keySuffix` exists (e.g. `bridge:dead:index`), for the hint after an
 * empty listing: the usual cause is a prefix that is not the bridge's. SCAN on every primary (a
 * cluster's keys are spread over them: one node's SCAN would miss most of them), bounded to
 * `maxScanned` keys per primary and 10 prefixes.
 */
export async function otherPrefixesWith(
  redis: RedisClient,
  keySuffix: string,
  prefix: string,
  maxScanned = 50_000,
): Promise<string[]> {
  const found = new Set<string>();
  for (const node of primaryConnections(redis)) {
    let cursor = '0';
    let scanned = 0;
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `*:${keySuffix}`, 'COUNT', 1000);
      cursor = next;
      scanned += 1000;
      for (const key of keys) {
        const other = prefixOfKeyStart(key.slice(0, -(keySuffix.length + 1)));
        if (other !== prefix && other !== '') found.add(other);
      }
    } while (cursor !== '0' && scanned < maxScanned && found.size < 10);
    if (found.size >= 10) break;
  }
  return [...found].sort();
}

/**
 * The `redis.prefix` a key's start stands for: as written with one Redis, and inside its hash tag
 * with a cluster or several shards (`{cb}` and the shard tags `{cb:3}`, `{cb:3.17}` are prefix `cb`,
 * which has no `:`), so that the hint names what `--prefix` takes.
 */
export function prefixOfKeyStart(start: string): string {
  const tagged = /^\{([^}]*)\}$/.exec(start);
  if (tagged === null) return start;
  return (tagged[1] ?? '').split(':')[0] ?? '';
}

/** How every Redis-reading command finds Redis, for its --help. */
export const REDIS_TARGET_HELP = `Redis: --config (or config/bridge.yaml, then $CONVO_BRIDGE_CONFIG) gives redis.url and redis.prefix,
as for start; --redis-url and --prefix override them (redis://host:port/N: database N, default 0).
Unreachable Redis: exit 2 within 5 s; a database the server refuses: exit 1.
With businesses, --business ID says whose entries (required when the config has several).`;
