import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { z } from 'zod';
import { EventBatchDataSchema } from '../../../src/queue/event-job.js';
import { createKeyLayout, type KeyLayout } from '../../../src/queue/key-layout.js';
import { type BridgeKeys, QUEUE_NAMES } from '../../../src/queue/redis-keys.js';
import type { RedisClient } from '../../../src/redis/redis-client.js';
import { createRedisClient, type RedisTopology } from '../../../src/redis/redis-connection.js';
import { type RedisServerHandle, startRedisServer } from '../../../src/redis/start-redis-server.js';
import {
  type RedisClusterHandle,
  type RedisSentinelHandle,
  startRedisCluster,
  startRedisSentinel,
} from '../../../tools/redis/redis-topology.js';
import {
  type BridgeProcess,
  type CrmSink,
  type ExampleEdits,
  exampleConfig,
  findFreePort,
  spawnBridge,
  startCrmSink,
  writeTempConfig,
} from '../../support/bridge-harness.js';
import { type EmulatorProcess, startEmulatorProcess } from './emulator-process.js';
import { FaultSuiteError } from './fault-suite-error.js';
import { waitUntil } from './wait-until.js';

export const FAULTS = {
  businessId: 'biz-faults',
  secret: 'sk-faults-secret',
  webhookSecret: 'wh-faults-secret',
  crmSecret: 'crm-faults-secret',
  path: '/webhooks/platform',
  prefix: 'faults',
} as const;

export type BridgeMode = 'start' | 'serve' | 'work';

const execFileAsync = promisify(execFile);
const CLI = join(process.cwd(), 'dist', 'cli.js');

/** What the suite reads of one entry of `dlq list --json` (the rest is kept, unread). */
const DeadLetterListingSchema = z.looseObject({
  id: z.string(),
  code: z.string().optional(),
  reason: z.string().optional(),
  conversationId: z.string().nullable().optional(),
  actions: z
    .array(z.looseObject({ id: z.string(), state: z.string(), detail: z.string().optional() }))
    .optional(),
});
export type DeadLetterListing = z.infer<typeof DeadLetterListingSchema>;

/** How long the queues and the platform's deliveries must stay idle before a row counts actions. */
const QUIET_MS = 3_000;

/**
 * The Redis a world runs on. Every topology keeps the append-only file on. `single` (the default,
 * scenarios 1-6): one private redis-server, `redis.url` in the config. `sentinel`: a primary with
 * `replicas` replicas and 3 sentinels (`redis.sentinels` + `redis.name`). `cluster`: `primaries`
 * primaries with `replicasPerPrimary` replicas each (`redis.cluster.nodes`, `redis.shards`).
 * `replicas_ack` stays at its default (auto: 1 with sentinels or a cluster).
 */
export type FaultRedis =
  | { kind: 'single' }
  | { kind: 'sentinel'; replicas: number; downAfterMs?: number; failoverTimeoutMs?: number }
  | {
      kind: 'cluster';
      primaries: number;
      replicasPerPrimary: number;
      shards: number;
      nodeTimeoutMs?: number;
    };

/** The started topology, for the scenarios that fail parts of it. */
export type FaultTopology =
  | { kind: 'single'; server: RedisServerHandle }
  | { kind: 'sentinel'; sentinel: RedisSentinelHandle }
  | { kind: 'cluster'; cluster: RedisClusterHandle };

const address = (n: { host: string; port: number }) => `${n.host}:${n.port}`;

async function startTopology(spec: FaultRedis): Promise<FaultTopology> {
  switch (spec.kind) {
    case 'single':
      return { kind: 'single', server: await startRedisServer({ appendOnly: true }) };
    case 'sentinel':
      return {
        kind: 'sentinel',
        sentinel: await startRedisSentinel({
          replicas: spec.replicas,
          sentinels: 3,
          appendOnly: true,
          ...(spec.downAfterMs === undefined ? {} : { downAfterMs: spec.downAfterMs }),
          ...(spec.failoverTimeoutMs === undefined ? {} : { failoverTimeoutMs: spec.failoverTimeoutMs }),
        }),
      };
    case 'cluster':
      return {
        kind: 'cluster',
        cluster: await startRedisCluster({
          primaries: spec.primaries,
          replicasPerPrimary: spec.replicasPerPrimary,
          appendOnly: true,
          ...(spec.nodeTimeoutMs === undefined ? {} : { nodeTimeoutMs: spec.nodeTimeoutMs }),
        }),
      };
  }
}

function stopTopology(topology: FaultTopology): Promise<void> {
  switch (topology.kind) {
    case 'single':
      return topology.server.stop();
    case 'sentinel':
      return topology.sentinel.stop();
    case 'cluster':
      return topology.cluster.stop();
  }
}

/** The bridge's own description of the topology (what its config says), for the suite's client. */
function bridgeTopology(topology: FaultTopology): RedisTopology {
  switch (topology.kind) {
    case 'single':
      return { kind: 'single', url: topology.server.url };
    case 'sentinel':
      return {
        kind: 'sentinel',
        sentinels: topology.sentinel.sentinels,
        name: topology.sentinel.name,
        tls: false,
        db: 0,
      };
    case 'cluster':
      return { kind: 'cluster', nodes: topology.cluster.nodes, tls: false };
  }
}

/**
 * The example config's `redis:` block (`url:` and the `prefix:` line exampleConfig adds) for the
 * topology; unchanged for a single Redis, so scenarios 1-6 run on the config they always had.
 */
function withTopology(config: string, topology: FaultTopology, spec: FaultRedis): string {
  if (topology.kind === 'single') return config;
  const block =
    topology.kind === 'sentinel'
      ? `  sentinels: [ ${topology.sentinel.sentinels.map((n) => `"${address(n)}"`).join(', ')} ]\n  name: ${topology.sentinel.name}\n`
      : `  cluster:\n    nodes: [ ${topology.cluster.nodes.map((n) => `"${address(n)}"`).join(', ')} ]\n  shards: ${spec.kind === 'cluster' ? spec.shards : 1}\n`;
  const replaced = config.replace(/(redis:\n) {2}url: [^\n]*\n/, `$1${block}`);
  if (replaced === config) throw new Error('the example config has no `redis:\\n  url:` line to replace');
  return replaced;
}

/**
 * The bridge's keys as the suite reads them: on a cluster, a conversation's keys live in its queue
 * shard (under that shard's hash tag), the keys of no conversation under the global tag. Per-event
 * keys (`run`, `dedupe`) cannot be routed from the event key alone there; no cluster scenario
 * reads them.
 */
function suiteKeys(layout: KeyLayout): BridgeKeys {
  if (layout.shards === 1) return layout.global;
  const of = (conversationId: string) => layout.shardOf(conversationId).keys;
  const unroutable = (what: string) => () => {
    throw new Error(`${what} keys are per shard on a cluster: find the shard from the conversation`);
  };
  return {
    ...layout.global,
    conversation: (id: string) => of(id).conversation(id),
    order: (id: string) => of(id).order(id),
    run: unroutable('run'),
    dedupe: unroutable('dedupe'),
  };
}

export interface FaultWorldOptions {
  config: ExampleEdits;
  processes: BridgeMode[];
  randomSeed: number;
  webhookRetryDelaysMs?: readonly [number, number, number];
  /** Aborted when the scenario is out of budget: every process of the world is killed at once. */
  signal: AbortSignal;
  /** Give every `work` process a port for /metrics and /readyz (`work --port`). */
  workMetrics?: boolean;
  /** More flags for the emulator process (e.g. `--image-links`). */
  emulatorArgs?: readonly string[];
  /** The Redis topology; one redis-server by default. */
  redis?: FaultRedis;
}

/**
 * One scenario's world, every part a real process except the CRM sink: a private `redis-server`
 * with the append-only file on, the emulator (`node dist/cli.js emulator`), and convo-bridge
 * processes (`node dist/cli.js start|serve|work`) configured from config/bridge.example.yaml.
 * Nothing here touches the shared Redis on 6379; everything listens on 127.0.0.1.
 */
export async function createFaultWorld(options: FaultWorldOptions) {
  const spec: FaultRedis = options.redis ?? { kind: 'single' };
  const topology = await startTopology(spec);
  const cleanups: (() => Promise<unknown>)[] = [() => stopTopology(topology)];
  let closed: Promise<void> | undefined;
  const cleanup = () => {
    closed ??= (async () => {
      for (const step of cleanups.reverse()) await step().catch(() => undefined);
    })();
    return closed;
  };
  const onAbort = () => void cleanup();
  options.signal.addEventListener('abort', onAbort, { once: true });
  cleanups.push(async () => options.signal.removeEventListener('abort', onAbort));
  try {
    // The suite's own client follows the topology as the bridge does (Sentinel: the current
    // primary; cluster: every shard), so it reads the same data after a failover.
    const redis: RedisClient = createRedisClient(bridgeTopology(topology), {
      maxRetriesPerRequest: null,
      connectionName: 'faults-suite',
    });
    redis.on('error', () => {});
    const layout = createKeyLayout({
      prefix: FAULTS.prefix,
      shards: spec.kind === 'cluster' ? spec.shards : 1,
      tagged: spec.kind === 'cluster',
    });
    const eventsQueues = layout.all.map((shard) => {
      const queue = new Queue(QUEUE_NAMES.events, { connection: redis, prefix: shard.queuePrefix });
      // Redis is killed on purpose in some scenarios: connection errors are expected, not news.
      queue.on('error', () => {});
      return queue;
    });
    cleanups.push(async () => {
      await Promise.allSettled(eventsQueues.map((queue) => queue.close()));
      redis.disconnect();
    });
    const crm = await startCrmSink(FAULTS.crmSecret);
    cleanups.push(() => crm.close());
    const receiverPort = await findFreePort();
    const receiverUrl = `http://127.0.0.1:${receiverPort}${FAULTS.path}`;
    const emulator: EmulatorProcess = await startEmulatorProcess({
      businessId: FAULTS.businessId,
      secret: FAULTS.secret,
      webhookUrl: receiverUrl,
      webhookSecret: FAULTS.webhookSecret,
      randomSeed: options.randomSeed,
      webhookRetryDelaysMs: options.webhookRetryDelaysMs ?? [500, 1000, 2000],
      requestLogSize: 1_000_000,
      deliveryLogSize: 200_000,
      ...(options.emulatorArgs ? { extraArgs: options.emulatorArgs } : {}),
    });
    cleanups.push(() => emulator.stop());
    // Done jobs kept an hour (retention.done_events; the default removes them as they complete):
    // the suite reads the completed set (recovery times) and every batch job's runs (jobStats).
    const edits = { retention: { done_events: '1h' }, ...options.config };
    const file = await writeTempConfig(withTopology(await exampleConfig(edits), topology, spec));
    cleanups.push(() => file.cleanup());
    const env: Record<string, string> = {
      PLATFORM_BASE_URL: emulator.url,
      BUSINESS_ID: FAULTS.businessId,
      SECRET_KEY: FAULTS.secret,
      WEBHOOK_SECRET: FAULTS.webhookSecret,
      PORT: String(receiverPort),
      ...(topology.kind === 'single' ? { REDIS_URL: topology.server.url } : {}),
      REDIS_PREFIX: FAULTS.prefix,
      CRM_WEBHOOK_URL: crm.url,
      CRM_SECRET: FAULTS.crmSecret,
    };
    const bridges: BridgeProcess[] = [];
    const metricsOrigins = new Map<BridgeProcess, string>();
    cleanups.push(() => Promise.allSettled(bridges.map((b) => b.stop('SIGKILL'))));
    // FAULTS_LOG_DIR=DIR keeps every bridge process's log (to study a failing run).
    const logDir = process.env.FAULTS_LOG_DIR;
    if (logDir) {
      cleanups.push(async () => {
        await mkdir(logDir, { recursive: true });
        for (const [i, b] of bridges.entries()) {
          await writeFile(join(logDir, `${i}-${b.proc.spawnargs[2] ?? 'bridge'}.log`), b.logs.join('\n'));
        }
      });
    }
    /** Starts one more bridge process; `extraEnv` on top of the world's (e.g. a test clock offset). */
    const launch = async (mode: BridgeMode, extraEnv: Record<string, string> = {}) => {
      const port = mode === 'work' && options.workMetrics ? await findFreePort() : undefined;
      const bridge = await spawnBridge(
        mode,
        file.path,
        { ...env, ...extraEnv },
        port === undefined ? [] : ['--port', String(port)],
      );
      bridges.push(bridge);
      if (port !== undefined) metricsOrigins.set(bridge, `http://127.0.0.1:${port}`);
      else if (mode !== 'work') metricsOrigins.set(bridge, `http://127.0.0.1:${receiverPort}`);
      return bridge;
    };
    await Promise.all(options.processes.map((mode) => launch(mode)));

    const keys = suiteKeys(layout);
    const world = {
      /** The one redis-server of a single-Redis world (scenarios that kill and restart it). */
      get redisServer(): RedisServerHandle {
        if (topology.kind !== 'single') throw new Error(`this world runs on a ${topology.kind} topology`);
        return topology.server;
      },
      topology,
      layout,
      redis,
      keys,
      crm,
      emulator,
      admin: emulator.admin,
      receiverUrl,
      receiverOrigin: `http://127.0.0.1:${receiverPort}`,
      bridges,
      launch,
      signal: options.signal,
      /** waitFor with a deadline that also stops when the scenario is aborted. */
      waitUntil<T>(
        probe: () => T | undefined | false | Promise<T | undefined | false>,
        wait: { timeoutMs: number; what: string; intervalMs?: number },
      ): Promise<T> {
        return waitUntil(probe, { ...wait, signal: options.signal });
      },
      /** Where a bridge process serves /metrics (serve and start: the receiver's port). */
      metricsOrigin(bridge: BridgeProcess): string | undefined {
        return metricsOrigins.get(bridge);
      },
      /** Bridge processes that still run, of one mode. */
      running(mode?: BridgeMode) {
        return bridges.filter(
          (b) =>
            b.proc.exitCode === null &&
            b.proc.signalCode === null &&
            (mode === undefined || b.proc.spawnargs.includes(mode)),
        );
      },
      /** Events jobs not finished yet (waiting, running, parked behind their conversation, backing off). */
      async pendingJobs(): Promise<number> {
        const counts = await Promise.all(
          eventsQueues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
        );
        return counts.flatMap((c) => Object.values(c)).reduce((sum, n) => sum + n, 0);
      },
      /**
       * Waits until the platform has nothing left to deliver and the bridge nothing left to do, and
       * both stay so for QUIET_MS (a retried webhook may still be on its way). Every "exactly once"
       * check of the suite runs after this: a late duplicate would have landed by then.
       */
      async settle(timeoutMs: number, what: string): Promise<void> {
        let quietSince: number | null = null;
        await world.waitUntil(
          async () => {
            const pending = await world.pendingJobs();
            const deliveries = pending === 0 ? await emulator.admin.deliveries() : [];
            const busy =
              pending > 0 || deliveries.some((d) => d.state === 'queued' || d.state === 'delivering');
            if (busy) {
              quietSince = null;
              return false;
            }
            quietSince ??= Date.now();
            return Date.now() - quietSince >= QUIET_MS;
          },
          { timeoutMs, intervalMs: 500, what },
        );
      },
      /**
       * Every events job still kept (a batch of the receiver's group commit, `b-*`): runs started
       * (BullMQ's `ats`, parking behind the conversation and rate-limit pauses included) and the
       * most failed runs of one of its events (`data.failures`: each event of a batch has its own
       * attempts, counted by the worker, not BullMQ's `atm`).
       */
      async jobStats(): Promise<{ id: string; started: number; failedRuns: number }[]> {
        if (topology.kind === 'cluster') throw new Error('jobStats reads one Redis; this world is a cluster');
        const stats: { id: string; started: number; failedRuns: number }[] = [];
        const jobPrefix = `${FAULTS.prefix}:${QUEUE_NAMES.events}:`;
        let cursor = '0';
        for (let pages = 0; pages < 100_000; pages++) {
          const [next, found] = await redis.scan(cursor, 'MATCH', `${jobPrefix}b-*`, 'COUNT', 1000);
          const jobKeys = found.filter((key) => !key.slice(jobPrefix.length).includes(':'));
          const pipeline = redis.pipeline();
          for (const key of jobKeys) pipeline.hmget(key, 'ats', 'data');
          const rows = (await pipeline.exec()) ?? [];
          jobKeys.forEach((key, i) => {
            const [started, data] = (rows[i]?.[1] ?? []) as (string | null)[];
            const id = key.slice(jobPrefix.length);
            stats.push({ id, started: Number(started ?? 0), failedRuns: mostFailures(id, data ?? null) });
          });
          cursor = next;
          if (cursor === '0') break;
        }
        return stats;
      },
      /**
       * The dead letters as an operator sees them: `convo-bridge dlq list --json` run from the build
       * with the world's config and environment, as a user runs it.
       */
      async dlqList(): Promise<DeadLetterListing[]> {
        const { stdout } = await execFileAsync(
          process.execPath,
          [CLI, 'dlq', 'list', '--config', file.path, '--json', '--limit', '10000'],
          { env: { ...process.env, ...env }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
        ).catch((error: unknown) => {
          throw new FaultSuiteError('DLQ_LIST', '`convo-bridge dlq list --json` failed', { cause: error });
        });
        const parsed = DeadLetterListingSchema.array().safeParse(JSON.parse(stdout));
        if (!parsed.success) {
          throw new FaultSuiteError(
            'DLQ_LIST',
            `\`dlq list --json\` printed an unexpected shape: ${stdout.slice(0, 200)}`,
            {
              cause: parsed.error,
            },
          );
        }
        return parsed.data;
      },
      async deadLetters(): Promise<number> {
        return (await world.dlqList()).length;
      },
      /** `conversation: code: reason (actions)` of a few dead letters, for a failure's problem list. */
      async deadLetterReasons(limit = 3): Promise<string[]> {
        return (await world.dlqList()).slice(0, limit).map((entry) => {
          const actions = (entry.actions ?? []).map(
            (a) => `${a.id} ${a.state}${a.detail ? ` (${a.detail})` : ''}`,
          );
          return `${entry.conversationId ?? '-'}: ${entry.code ?? '?'}: ${entry.reason ?? '?'} [${actions.join('; ')}]`;
        });
      },
      close: cleanup,
    };
    return world;
  } catch (error) {
    await cleanup();
    throw error;
  }
}
export type FaultWorld = Awaited<ReturnType<typeof createFaultWorld>>;
export type { CrmSink };

/**
 * The most failed runs of one event of a batch job, from the job's data (0 when no event failed).
 * Data that cannot be read throws: a figure of 0 from a misread job once hid how close a row came
 * to its attempts (issue 30).
 */
export function mostFailures(jobId: string, data: string | null): number {
  if (data === null) throw new FaultSuiteError('JOB_DATA', `job ${jobId} has no data field`);
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw new FaultSuiteError('JOB_DATA', `job ${jobId}: its data is not JSON (${data.slice(0, 80)})`, {
      cause: error,
    });
  }
  const parsed = EventBatchDataSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FaultSuiteError(
      'JOB_DATA',
      `job ${jobId}: its data is not an events batch (${issue?.path.join('.') || '(root)'}: ${issue?.message})`,
      { cause: parsed.error },
    );
  }
  return Math.max(0, ...Object.values(parsed.data.failures ?? {}));
}
