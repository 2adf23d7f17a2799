import { spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { ConvoBridgeError, describeError } from '../../src/base/errors.js';
import { waitFor } from '../../src/base/wait-for.js';
import { CLUSTER_SLOTS, keyInSlotRange, keySlot } from '../../src/redis/key-slot.js';
import {
  findFreePort,
  hasRedisServerBinary,
  REDIS_INSTALL_HINT,
} from '../../src/redis/start-redis-server.js';
import { type ClusterNodeView, parseClusterNodes, type SlotRange } from './parse-cluster-nodes.js';
import { createRedisNodeProcess, type RedisNodeProcess } from './redis-node-process.js';

/**
 * Real Redis Cluster and Sentinel topologies, started from code on 127.0.0.1 for the integration
 * tests, the fault suite and the benches. Every process is a child of this one, lives in a temp dir
 * removed by `stop()`, and never touches a Redis someone else runs.
 */

export type { ClusterNodeView, SlotRange };

export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

export interface RedisClusterOptions {
  /** Number of primaries (at least 3, so that a majority survives losing one). Default 3. */
  primaries?: number;
  /** Replicas per primary. Default 1. */
  replicasPerPrimary?: number;
  appendOnly?: boolean;
  /**
   * `cluster-node-timeout`: how long a node may be unreachable before it is suspected. Small by
   * default (1500 ms) so that a failover takes a few seconds in a test, not half a minute.
   */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage`. Default false: the shards that are up keep serving while one
   * is down or failing over, which is what a test of "the other shards keep working" needs and what
   * most deployments choose. Set true to see CLUSTERDOWN on every slot while any slot is uncovered.
   */
  requireFullCoverage?: boolean;
  /** `requirepass`/`masterauth` on every node (issue 29: a cluster reached by redis://:password@ URLs). */
  password?: string;
  binary?: string;
  cliBinary?: string;
}

export interface RedisClusterHandle {
  /** Startup nodes for `new Cluster(nodes)`: every node, primaries and replicas. */
  readonly nodes: readonly RedisAddress[];
  /** Primaries that are not flagged failed, with their slots, read live from `CLUSTER NODES`. */
  primaries(): Promise<ClusterNodeView[]>;
  /** Replicas that are not flagged failed, read live from `CLUSTER NODES`. */
  replicas(): Promise<ClusterNodeView[]>;
  /** Kills the primary serving a key's (or a slot number's) slot; resolves with its port. */
  killPrimaryOf(keyOrSlot: string | number, signal?: NodeJS.Signals): Promise<number>;
  /** Kills one node (SIGKILL by default) and waits until it has exited; its data dir is kept. */
  killNode(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a killed node again from its data dir and nodes.conf, then waits for `waitForClusterOk`. */
  restartNode(port: number): Promise<void>;
  /**
   * Resolves when every slot the killed primary served is served by another primary, all the
   * surviving nodes agree on that and say cluster_state:ok, and the new primaries accept a write
   * for those slots. Resolves with the new primaries.
   */
  waitForFailover(oldPrimaryPort: number, timeoutMs?: number): Promise<ClusterNodeView[]>;
  /**
   * Resolves when every running node says cluster_state:ok, all agree on which node serves each
   * of the 16384 slots, every running replica's link to its primary is up, and an ioredis
   * `Cluster` can write a key in every slot range.
   */
  waitForClusterOk(timeoutMs?: number): Promise<void>;
  /** Pids of the node processes running now. */
  pids(): number[];
  /** Copies every node's log into `dest` (before `stop`); resolves with the files. */
  saveLogs(dest: string): Promise<string[]>;
  /** Kills every node and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface RedisSentinelOptions {
  /** Replicas of the primary. Default 1. */
  replicas?: number;
  /** Sentinel processes. Default 3 (quorum 2). */
  sentinels?: number;
  /** The monitored master's name. Default 'cbmaster'. */
  masterName?: string;
  appendOnly?: boolean;
  /** `down-after-milliseconds`. Default 1000, so that a failover takes seconds in a test. */
  downAfterMs?: number;
  /**
   * `failover-timeout`. Default 5000. A sentinel that lost a leader election waits twice this long
   * before it tries again, so the production default (3 minutes) would stall a test.
   */
  failoverTimeoutMs?: number;
  /** `requirepass`/`masterauth` on the data nodes (sentinels get `auth-pass`). */
  password?: string;
  /**
   * The sentinels' own `requirepass` (and `sentinel sentinel-pass`, so that they still talk to each
   * other). Default: none.
   */
  sentinelPassword?: string;
  binary?: string;
}

export interface RedisSentinelHandle {
  readonly sentinels: readonly RedisAddress[];
  readonly name: string;
  /** The data nodes (primary and replicas) as started; roles change on failover. */
  readonly nodes: readonly RedisAddress[];
  /** The primary, as `SENTINEL get-master-addr-by-name` of the first sentinel that answers. */
  primary(): Promise<RedisAddress>;
  /** Kills the current primary (SIGKILL by default); resolves with its port. */
  killPrimary(signal?: NodeJS.Signals): Promise<number>;
  /** Kills one data node or sentinel and waits until it has exited. */
  killNode(port: number, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts a killed node again. A data node comes back as a replica of the primary the sentinels
   * name now and resolves once it has rejoined (`waitForRejoin`: the sentinels may elect it again
   * meanwhile).
   */
  restartNode(port: number): Promise<void>;
  /**
   * Resolves once data node `port` is back in the setup, whichever primary the sentinels elected
   * meanwhile: every running sentinel names the same primary, and the node is that primary
   * (answering ROLE master) or a replica with a live link to it that every sentinel sees.
   */
  waitForRejoin(port: number, timeoutMs?: number): Promise<void>;
  /**
   * Resolves when every running sentinel names a primary other than `oldPrimaryPort`, and that
   * node answers ROLE as master and accepts a write. Resolves with the new primary.
   */
  waitForFailover(oldPrimaryPort: number, timeoutMs?: number): Promise<RedisAddress>;
  /** Pids of the processes (data nodes and sentinels) running now. */
  pids(): number[];
  /** Copies every node's and sentinel's log into `dest` (before `stop`); resolves with the files. */
  saveLogs(dest: string): Promise<string[]>;
  /** Kills every process and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const PROBE_TTL_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// Cluster

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const binary = options.binary ?? 'redis-server';
  const cliBinary = options.cliBinary ?? 'redis-cli';
  requireBinary(binary, 'a Redis cluster');
  requireBinary(cliBinary, 'a Redis cluster');
  const primaryCount = options.primaries ?? 3;
  const replicasPerPrimary = options.replicasPerPrimary ?? 1;
  if (!Number.isInteger(primaryCount) || primaryCount < 3) {
    throw new ConvoBridgeError(`a Redis cluster needs at least 3 primaries, not ${primaryCount}`, {
      code: 'REDIS_TOPOLOGY_OPTIONS',
    });
  }
  if (!Number.isInteger(replicasPerPrimary) || replicasPerPrimary < 0) {
    throw new ConvoBridgeError(`replicasPerPrimary must be 0 or more, not ${replicasPerPrimary}`, {
      code: 'REDIS_TOPOLOGY_OPTIONS',
    });
  }
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1500;
  const auth = checkedPassword(options.password, 'a test cluster');
  const root = await mkdtemp(join(tmpdir(), 'convo-bridge-cluster-'));
  /** Every process ever created, for `stop` (a failed start included). */
  const spawned: RedisNodeProcess[] = [];
  /** The nodes, in `--cluster create` order (primaries first). */
  let nodes: RedisNodeProcess[] = [];
  /** Slots a primary served when `killNode` took it down, for `waitForFailover`. */
  const servedWhenKilled = new Map<number, SlotRange[]>();
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.allSettled(spawned.map((node) => node.kill('SIGKILL')));
    await rm(root, { recursive: true, force: true });
  };

  const running = () => nodes.filter((node) => node.running);
  const nodeAt = (port: number) => {
    const node = nodes.find((candidate) => candidate.port === port);
    if (!node) {
      throw new ConvoBridgeError(`no node of this cluster listens on port ${port}`, {
        code: 'REDIS_NODE_UNKNOWN',
      });
    }
    return node;
  };

  /** `CLUSTER NODES` from the first running node that answers (other than `exceptPort`). */
  const currentView = async (exceptPort?: number): Promise<ClusterNodeView[]> => {
    let lastError: unknown;
    for (const node of running()) {
      if (node.port === exceptPort) continue;
      try {
        return parseClusterNodes(String(await adminCall(node.port, ['CLUSTER', 'NODES'], auth)));
      } catch (error) {
        lastError = error;
      }
    }
    throw new ConvoBridgeError('no running node of the cluster answered CLUSTER NODES', {
      code: 'REDIS_CLUSTER_UNREACHABLE',
      cause: lastError,
    });
  };

  const checkClusterOk = async (): Promise<true> => {
    const up = running();
    const views = await Promise.all(
      up.map(async (node) => {
        const port = node.port;
        const info = String(await adminCall(port, ['CLUSTER', 'INFO'], auth));
        if (!/^cluster_state:ok\r?$/m.test(info))
          throw new Error(`node ${port} does not say cluster_state:ok`);
        return { port, view: parseClusterNodes(String(await adminCall(port, ['CLUSTER', 'NODES'], auth))) };
      }),
    );
    let agreed: string | undefined;
    let agreedRoles: string | undefined;
    for (const { port, view } of views) {
      const owners = slotOwners(view);
      const uncovered = owners.indexOf(undefined);
      if (uncovered !== -1)
        throw new Error(`node ${port} sees slot ${uncovered} served by no healthy primary`);
      const signature = owners.join(',');
      if (agreed === undefined) agreed = signature;
      else if (signature !== agreed) throw new Error(`node ${port} disagrees with the others on slot owners`);
      for (const node of up) {
        const seen = view.find((entry) => entry.port === node.port);
        if (!seen || seen.failed || seen.flags.includes('handshake') || seen.flags.includes('noaddr')) {
          throw new Error(`node ${port} does not see node ${node.port} as healthy`);
        }
        // Every node here is a primary with slots or a replica (replica migration is off); a
        // primary without slots is a replica-to-be that has not been told (or not yet told others).
        if (seen.role === 'primary' && seen.slots.length === 0) {
          throw new Error(`node ${port} sees node ${node.port} as a primary without slots`);
        }
      }
      const roles = up
        .map((node) => view.find((entry) => entry.port === node.port))
        .map((entry) => `${entry?.id}:${entry?.role}:${entry?.primaryId}`)
        .join(',');
      if (agreedRoles === undefined) agreedRoles = roles;
      else if (roles !== agreedRoles) throw new Error(`node ${port} disagrees with the others on roles`);
      const self = view.find((entry) => entry.flags.includes('myself'));
      if (self?.role === 'replica') {
        const replication = String(await adminCall(port, ['INFO', 'replication'], auth));
        if (!/^master_link_status:up\r?$/m.test(replication)) {
          throw new Error(`replica ${port} has no live link to its primary yet`);
        }
      }
    }
    const first = views[0];
    if (!first) throw new Error('no node of the cluster is running');
    await writeEverySlotRange(
      up.map((node) => ({ host: HOST, port: node.port })),
      first.view,
      auth,
    );
    return true;
  };

  const waitForClusterOk = async (timeoutMs = 30_000) => {
    await waitUntil(`the cluster to be ok on ${running().length} running nodes`, timeoutMs, checkClusterOk);
  };

  try {
    const taken = new Set<number>();
    nodes = await allStarted(
      Array.from({ length: primaryCount * (1 + replicasPerPrimary) }, async (_unused, index) => {
        const dir = join(root, `node-${index}`);
        await mkdir(dir);
        return startOnFreePorts(taken, 2, async ([port, busPort]) => {
          const configFile = join(dir, 'redis.conf');
          await writeConfig(configFile, [
            ...dataNodeConfig(port, dir, options.appendOnly ?? false),
            ...(auth === undefined ? [] : [`requirepass ${auth}`, `masterauth ${auth}`]),
            // The bus port is chosen apart: port + 10000 may be taken or beyond 65535.
            `cluster-port ${busPort}`,
            'cluster-enabled yes',
            'cluster-config-file nodes.conf',
            `cluster-node-timeout ${nodeTimeoutMs}`,
            'cluster-replica-no-failover no',
            // Let a replica take over however long its link was down: tests kill on purpose.
            'cluster-replica-validity-factor 0',
            // Replicas stay where `--cluster create` put them, so tests can reason about the shape.
            'cluster-allow-replica-migration no',
            `cluster-require-full-coverage ${options.requireFullCoverage ? 'yes' : 'no'}`,
            'cluster-allow-reads-when-down no',
          ]);
          const process = createRedisNodeProcess({
            binary,
            label: `cluster node ${index}`,
            port,
            configFile,
            ...(auth === undefined ? {} : { password: auth }),
          });
          spawned.push(process);
          return process;
        });
      }),
    );
    const create = await runCli(
      cliBinary,
      [
        '--cluster',
        'create',
        ...nodes.map((node) => `${HOST}:${node.port}`),
        '--cluster-replicas',
        String(replicasPerPrimary),
        '--cluster-yes',
        ...(auth === undefined ? [] : ['-a', auth, '--no-auth-warning']),
      ],
      60_000,
    );
    if (create.code !== 0) {
      throw new ConvoBridgeError(
        `redis-cli --cluster create failed (exit ${create.code}); its output ends with:\n${create.output}`,
        { code: 'REDIS_CLUSTER_CREATE_FAILED' },
      );
    }
    await waitForClusterOk();
  } catch (error) {
    await stop();
    throw error;
  }

  const killNode = async (port: number, signal: NodeJS.Signals = 'SIGKILL') => {
    const node = nodeAt(port);
    const served = (await currentView(port).catch(() => [])).find((entry) => entry.port === port);
    if (served?.role === 'primary' && served.slots.length > 0) servedWhenKilled.set(port, [...served.slots]);
    await node.kill(signal);
  };

  return {
    nodes: nodes.map((node) => ({ host: HOST, port: node.port })),
    async primaries() {
      return (await currentView()).filter((entry) => entry.role === 'primary' && !entry.failed);
    },
    async replicas() {
      return (await currentView()).filter((entry) => entry.role === 'replica' && !entry.failed);
    },
    async killPrimaryOf(keyOrSlot, signal = 'SIGKILL') {
      const slot = typeof keyOrSlot === 'number' ? keyOrSlot : keySlot(keyOrSlot);
      const owner = (await currentView()).find(
        (entry) =>
          entry.role === 'primary' && !entry.failed && entry.slots.some(([s, e]) => slot >= s && slot <= e),
      );
      if (!owner) {
        throw new ConvoBridgeError(`no healthy primary serves slot ${slot}`, {
          code: 'REDIS_CLUSTER_UNREACHABLE',
        });
      }
      await killNode(owner.port, signal);
      return owner.port;
    },
    killNode,
    async restartNode(port) {
      await nodeAt(port).start();
      await waitForClusterOk();
    },
    async waitForFailover(oldPrimaryPort, timeoutMs = 30_000) {
      const ranges =
        servedWhenKilled.get(oldPrimaryPort) ??
        (await currentView(oldPrimaryPort)).find((entry) => entry.port === oldPrimaryPort)?.slots ??
        [];
      if (ranges.length === 0) {
        throw new ConvoBridgeError(
          `node ${oldPrimaryPort} served no slots: there is no failover to wait for`,
          {
            code: 'REDIS_TOPOLOGY_OPTIONS',
          },
        );
      }
      return waitUntil(`a replica to take over the slots of node ${oldPrimaryPort}`, timeoutMs, async () => {
        const survivors = running().filter((node) => node.port !== oldPrimaryPort);
        let newOwners: ClusterNodeView[] | undefined;
        let agreed: string | undefined;
        for (const node of survivors) {
          const port = node.port;
          const info = String(await adminCall(port, ['CLUSTER', 'INFO'], auth));
          if (!/^cluster_state:ok\r?$/m.test(info))
            throw new Error(`node ${port} does not say cluster_state:ok`);
          const view = parseClusterNodes(String(await adminCall(port, ['CLUSTER', 'NODES'], auth)));
          const owners = slotOwners(view);
          const byId = new Map(view.map((entry) => [entry.id, entry]));
          const taken: ClusterNodeView[] = [];
          for (const [start, end] of ranges) {
            for (let slot = start; slot <= end; slot += 1) {
              const owner = byId.get(owners[slot] ?? '');
              if (!owner || owner.port === oldPrimaryPort) {
                throw new Error(`node ${port} sees slot ${slot} still served by no new primary`);
              }
              if (!survivors.some((survivor) => survivor.port === owner.port)) {
                throw new Error(
                  `node ${port} sees slot ${slot} served by ${owner.port}, which is not running`,
                );
              }
              if (!taken.includes(owner)) taken.push(owner);
            }
          }
          const signature = taken.map((owner) => owner.id).join(',');
          if (agreed === undefined) {
            agreed = signature;
            newOwners = taken;
          } else if (signature !== agreed) {
            throw new Error(`node ${port} disagrees with the others on the new primaries`);
          }
        }
        if (!newOwners) throw new Error('no surviving node is running');
        for (const [start, end] of ranges) {
          const owner = newOwners.find((entry) => entry.slots.some(([s, e]) => start >= s && start <= e));
          if (!owner) throw new Error(`no new primary for slot ${start}`);
          await adminCall(
            owner.port,
            ['SET', keyInSlotRange(start, end), '1', 'PX', String(PROBE_TTL_MS)],
            auth,
          );
        }
        return newOwners;
      });
    },
    waitForClusterOk,
    pids: () => pidsOf(spawned),
    saveLogs: (dest: string) => copyLogs(root, dest),
    stop,
  };
}

/** For each slot, the id of the healthy primary serving it in this view (or undefined). */
function slotOwners(view: readonly ClusterNodeView[]): (string | undefined)[] {
  const owners = new Array<string | undefined>(CLUSTER_SLOTS).fill(undefined);
  for (const entry of view) {
    if (entry.role !== 'primary' || entry.failed) continue;
    for (const [start, end] of entry.slots) owners.fill(entry.id, start, end + 1);
  }
  return owners;
}

/** What a client sees: ioredis `Cluster` discovers the slots and writes one key in every range. */
async function writeEverySlotRange(
  startupNodes: readonly RedisAddress[],
  view: readonly ClusterNodeView[],
  password: string | undefined,
): Promise<void> {
  const cluster = new Cluster([...startupNodes], {
    lazyConnect: true,
    clusterRetryStrategy: () => null,
    enableOfflineQueue: true,
    redisOptions: {
      connectTimeout: 1000,
      maxRetriesPerRequest: 0,
      ...(password === undefined ? {} : { password }),
    },
  });
  cluster.on('error', () => {});
  try {
    await cluster.connect();
    for (const entry of view) {
      if (entry.role !== 'primary' || entry.failed) continue;
      for (const [start, end] of entry.slots) {
        await cluster.set(keyInSlotRange(start, end), '1', 'PX', PROBE_TTL_MS);
      }
    }
  } finally {
    cluster.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Sentinel

export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinelHandle> {
  const binary = options.binary ?? 'redis-server';
  requireBinary(binary, 'a Redis Sentinel setup');
  const replicaCount = options.replicas ?? 1;
  const sentinelCount = options.sentinels ?? 3;
  const name = options.masterName ?? 'cbmaster';
  const password = checkedPassword(options.password, 'a test Sentinel setup');
  const sentinelAuth = checkedPassword(options.sentinelPassword, "a test Sentinel setup's sentinels");
  if (
    !Number.isInteger(replicaCount) ||
    replicaCount < 0 ||
    !Number.isInteger(sentinelCount) ||
    sentinelCount < 1
  ) {
    throw new ConvoBridgeError(
      `a Sentinel setup needs 0 or more replicas and at least 1 sentinel, not ${replicaCount} and ${sentinelCount}`,
      { code: 'REDIS_TOPOLOGY_OPTIONS' },
    );
  }
  const quorum = Math.floor(sentinelCount / 2) + 1;
  const root = await mkdtemp(join(tmpdir(), 'convo-bridge-sentinel-'));
  /** Every process ever created, for `stop` (a failed start included). */
  const spawned: RedisNodeProcess[] = [];
  /** Data nodes as started (the first primary first), and sentinels. */
  const dataNodes: RedisNodeProcess[] = [];
  const sentinelNodes: RedisNodeProcess[] = [];
  const auth = password;
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.allSettled(spawned.map((node) => node.kill('SIGKILL')));
    await rm(root, { recursive: true, force: true });
  };

  /** Asks each running sentinel in turn; the first answer wins. */
  const askSentinels = async (args: readonly string[]): Promise<unknown> => {
    let lastError: unknown;
    for (const sentinel of sentinelNodes) {
      if (!sentinel.running) continue;
      try {
        return await adminCall(sentinel.port, args, sentinelAuth);
      } catch (error) {
        lastError = error;
      }
    }
    throw new ConvoBridgeError(`no sentinel answered ${args.join(' ')}`, {
      code: 'REDIS_SENTINEL_UNREACHABLE',
      cause: lastError,
    });
  };

  const primary = async (): Promise<RedisAddress> =>
    toAddress(await askSentinels(['SENTINEL', 'get-master-addr-by-name', name]));

  /** Every running sentinel sees `replicaPorts` reachable (and the other sentinels, and a quorum). */
  const sentinelsSee = async (replicaPorts: readonly number[]) => {
    for (const sentinel of sentinelNodes.filter((node) => node.running)) {
      const master = packFields(await adminCall(sentinel.port, ['SENTINEL', 'MASTER', name], sentinelAuth));
      if (master.flags !== 'master')
        throw new Error(`sentinel ${sentinel.port} flags the primary ${master.flags}`);
      const others = Number(master['num-other-sentinels']);
      const runningSentinels = sentinelNodes.filter((node) => node.running).length;
      if (others < runningSentinels - 1) {
        throw new Error(
          `sentinel ${sentinel.port} knows ${others} other sentinels, not ${runningSentinels - 1}`,
        );
      }
      const known = (await adminCall(
        sentinel.port,
        ['SENTINEL', 'REPLICAS', name],
        sentinelAuth,
      )) as unknown[];
      for (const port of replicaPorts) {
        const replica = known.map(packFields).find((entry) => Number(entry.port) === port);
        if (!replica || /s_down|o_down|disconnected/.test(replica.flags ?? '')) {
          throw new Error(`sentinel ${sentinel.port} does not see replica ${port} as reachable`);
        }
      }
    }
    return true;
  };

  const linkUp = async (port: number, primaryPort: number) => {
    const replication = String(await adminCall(port, ['INFO', 'replication'], auth));
    if (!new RegExp(`^master_port:${primaryPort}\\r?$`, 'm').test(replication)) {
      throw new Error(`node ${port} is not a replica of ${primaryPort} yet`);
    }
    if (!/^master_link_status:up\r?$/m.test(replication))
      throw new Error(`replica ${port} has no live link yet`);
    return true;
  };

  /**
   * A restarted data node is back in the setup: the sentinels agree on a primary, and the node is
   * that primary (answering ROLE master) or a replica with a live link to it. Never a fixed role:
   * the sentinels may elect the restarted node itself (issue 30).
   */
  const rejoined = async (port: number): Promise<boolean> => {
    const current = await agreedPrimary();
    if (current.port !== port) {
      await linkUp(port, current.port);
      return sentinelsSee([port]);
    }
    const role = (await adminCall(port, ['ROLE'], auth)) as unknown[];
    if (role[0] !== 'master')
      throw new Error(`the sentinels name node ${port}, which answers ROLE ${String(role[0])}`);
    return sentinelsSee([]);
  };

  const waitForRejoin = async (port: number, timeoutMs = 30_000): Promise<void> => {
    await waitUntil(
      `node ${port} to rejoin (a replica of the current primary, or that primary)`,
      timeoutMs,
      () => rejoined(port),
    );
  };

  /** The primary every running sentinel names (they may disagree for a moment during a failover). */
  const agreedPrimary = async (): Promise<RedisAddress> => {
    const named = await Promise.all(
      sentinelNodes
        .filter((node) => node.running)
        .map(async (node) =>
          toAddress(await adminCall(node.port, ['SENTINEL', 'get-master-addr-by-name', name], sentinelAuth)),
        ),
    );
    const first = named[0];
    if (!first) throw new Error('no sentinel is running');
    if (named.some((address) => address.port !== first.port)) {
      throw new Error(`the sentinels name different primaries: ${named.map((a) => a.port).join(', ')}`);
    }
    return first;
  };

  const sentinels: RedisAddress[] = [];
  try {
    const taken = new Set<number>();
    const startDataNode = async (index: number, primaryPort: number | undefined) => {
      const dir = join(root, `data-${index}`);
      await mkdir(dir);
      return startOnFreePorts(taken, 1, async ([port]) => {
        const configFile = join(dir, 'redis.conf');
        await writeConfig(configFile, [
          ...dataNodeConfig(port, dir, options.appendOnly ?? false),
          ...(password === undefined ? [] : [`requirepass ${password}`, `masterauth ${password}`]),
          ...(primaryPort === undefined ? [] : [`replicaof ${HOST} ${primaryPort}`]),
        ]);
        const label = primaryPort === undefined ? 'primary' : `replica ${index}`;
        const node = createRedisNodeProcess({
          binary,
          label,
          port,
          configFile,
          ...(password === undefined ? {} : { password }),
        });
        spawned.push(node);
        return node;
      });
    };
    const first = await startDataNode(0, undefined);
    dataNodes.push(
      first,
      ...(await allStarted(
        Array.from({ length: replicaCount }, (_unused, index) => startDataNode(index + 1, first.port)),
      )),
    );
    // Sentinels learn the replicas from the primary's INFO, which they refresh only every 10 s:
    // start them once every replica is attached, so the first INFO already lists them all.
    await waitUntil('the replicas to sync with the primary', 30_000, async () => {
      for (const node of dataNodes.slice(1)) await linkUp(node.port, first.port);
      return true;
    });
    const startedSentinels = await allStarted(
      Array.from({ length: sentinelCount }, async (_unused, index) => {
        const dir = join(root, `sentinel-${index}`);
        await mkdir(dir);
        return startOnFreePorts(taken, 1, async ([port]) => {
          const configFile = join(dir, 'sentinel.conf');
          await writeConfig(configFile, [
            `port ${port}`,
            `bind ${HOST}`,
            `dir ${dir}`,
            `logfile ${join(dir, 'sentinel.log')}`,
            'sentinel resolve-hostnames no',
            'sentinel announce-hostnames no',
            `sentinel monitor ${name} ${HOST} ${first.port} ${quorum}`,
            `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
            `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 5000}`,
            `sentinel parallel-syncs ${name} 1`,
            ...(password === undefined ? [] : [`sentinel auth-pass ${name} ${password}`]),
            ...(sentinelAuth === undefined
              ? []
              : [`requirepass ${sentinelAuth}`, `sentinel sentinel-pass ${sentinelAuth}`]),
          ]);
          const process = createRedisNodeProcess({
            binary,
            label: `sentinel ${index}`,
            port,
            configFile,
            sentinel: true,
            ...(sentinelAuth === undefined ? {} : { password: sentinelAuth }),
          });
          spawned.push(process);
          return process;
        });
      }),
    );
    sentinelNodes.push(...startedSentinels);
    for (const node of sentinelNodes) sentinels.push({ host: HOST, port: node.port });
    await waitUntil('the sentinels to see the primary, its replicas and each other', 30_000, async () => {
      await sentinelsSee(dataNodes.slice(1).map((node) => node.port));
      const quorumCheck = String(
        await adminCall(sentinels[0]?.port ?? 0, ['SENTINEL', 'CKQUORUM', name], sentinelAuth),
      );
      if (!quorumCheck.startsWith('OK')) throw new Error(quorumCheck);
      return true;
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const nodeAt = (port: number) => {
    const node = [...dataNodes, ...sentinelNodes].find((candidate) => candidate.port === port);
    if (!node) {
      throw new ConvoBridgeError(`no process of this Sentinel setup listens on port ${port}`, {
        code: 'REDIS_NODE_UNKNOWN',
      });
    }
    return node;
  };

  const killNode = async (port: number, signal: NodeJS.Signals = 'SIGKILL') => {
    await nodeAt(port).kill(signal);
  };

  return {
    sentinels,
    name,
    nodes: dataNodes.map((node) => ({ host: HOST, port: node.port })),
    primary,
    async killPrimary(signal = 'SIGKILL') {
      const { port } = await primary();
      await killNode(port, signal);
      return port;
    },
    killNode,
    async restartNode(port) {
      const node = nodeAt(port);
      if (sentinelNodes.includes(node)) {
        await node.start();
        return;
      }
      const current = await primary();
      if (current.port === port) {
        // The sentinels still name it (no failover happened): it comes back as the primary.
        await node.start();
        return;
      }
      // Its config file may still say "primary" (it died as one). Started like that it would take
      // writes for the ~8 s a sentinel waits before converting it; start it as a replica instead.
      await node.start(['--replicaof', HOST, String(current.port)]);
      // The primary is asked again on every probe: on a loaded machine the sentinels may fail over
      // once more meanwhile (a slow answer looks like a dead primary) and point this node elsewhere,
      // or elect this very node (a full run once waited 30 s for "node P is not a replica of P").
      // Whichever primary they name, the node is back once it is that primary or replicates from it.
      await waitForRejoin(port);
    },
    async waitForFailover(oldPrimaryPort, timeoutMs = 30_000) {
      return waitUntil(
        `the sentinels to promote a replica in place of ${oldPrimaryPort}`,
        timeoutMs,
        async () => {
          const first = await agreedPrimary();
          if (first.port === oldPrimaryPort) throw new Error(`the sentinels still name ${oldPrimaryPort}`);
          const role = (await adminCall(first.port, ['ROLE'], auth)) as unknown[];
          if (role[0] !== 'master') throw new Error(`node ${first.port} answers ROLE ${String(role[0])}`);
          await adminCall(first.port, ['SET', 'cb-sentinel-probe', '1', 'PX', String(PROBE_TTL_MS)], auth);
          return first;
        },
      );
    },
    waitForRejoin,
    pids: () => pidsOf(spawned),
    saveLogs: (dest: string) => copyLogs(root, dest),
    stop,
  };
}

function toAddress(reply: unknown): RedisAddress {
  if (!Array.isArray(reply) || reply.length < 2) {
    throw new Error(`a sentinel answered get-master-addr-by-name with ${JSON.stringify(reply)}`);
  }
  return { host: String(reply[0]), port: Number(reply[1]) };
}

/** A flat [field, value, field, value, ...] reply (SENTINEL MASTER, SENTINEL REPLICAS) as an object. */
function packFields(reply: unknown): Record<string, string | undefined> {
  const fields: Record<string, string | undefined> = {};
  if (!Array.isArray(reply)) return fields;
  for (let index = 0; index + 1 < reply.length; index += 2) {
    fields[String(reply[index])] = String(reply[index + 1]);
  }
  return fields;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** A test password, written into config files unquoted: plain characters only. */
function checkedPassword(password: string | undefined, of: string): string | undefined {
  if (password !== undefined && (password === '' || /[\s"'\\]/.test(password))) {
    throw new ConvoBridgeError(
      `the password of ${of} may not be empty or hold spaces, quotes or backslashes`,
      {
        code: 'REDIS_TOPOLOGY_OPTIONS',
      },
    );
  }
  return password;
}

function requireBinary(binary: string, what: string): void {
  if (!hasRedisServerBinary(binary)) {
    throw new ConvoBridgeError(`cannot start ${what}: \`${binary}\` was not found; ${REDIS_INSTALL_HINT}`, {
      code: 'REDIS_SERVER_MISSING',
    });
  }
}

function dataNodeConfig(port: number, dir: string, appendOnly: boolean): string[] {
  return [
    `port ${port}`,
    `bind ${HOST}`,
    `dir ${dir}`,
    // In the node's dir, so that a failed fault-suite row can keep them (saveLogs).
    `logfile ${join(dir, 'redis.log')}`,
    'loglevel notice',
    'save ""',
    `appendonly ${appendOnly ? 'yes' : 'no'}`,
    'appendfsync everysec',
    'maxmemory-policy noeviction',
    // The default waits 5 s for more replicas before a full sync; a test has no one else coming.
    'repl-diskless-sync-delay 0',
  ];
}

/** Copies the `*.log` files of every node dir under `root` into `dest` as `<dir>-<file>`. */
async function copyLogs(root: string, dest: string): Promise<string[]> {
  await mkdir(dest, { recursive: true });
  const copied: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    for (const file of await readdir(join(root, entry.name))) {
      if (!file.endsWith('.log')) continue;
      const target = join(dest, `${entry.name}-${file}`);
      await copyFile(join(root, entry.name, file), target);
      copied.push(target);
    }
  }
  return copied;
}

async function writeConfig(file: string, lines: readonly string[]): Promise<void> {
  await writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

/** Picks `count` free ports not handed out before, builds a node on them and starts it. */
async function startOnFreePorts(
  taken: Set<number>,
  count: number,
  build: (ports: [number, ...number[]]) => Promise<RedisNodeProcess>,
): Promise<RedisNodeProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await findFreePort();
      if (!taken.has(port)) {
        taken.add(port);
        ports.push(port);
      }
    }
    const node = await build(ports as [number, ...number[]]);
    try {
      await node.start();
      return node;
    } catch (error) {
      const portTaken = error instanceof ConvoBridgeError && error.code === 'REDIS_PORT_IN_USE';
      if (!portTaken || attempt >= 3) throw error;
    }
  }
}

/** Like Promise.all, but waits for every start to settle, so that `stop` afterwards finds them all. */
async function allStarted<T>(starts: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(starts);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** One command on a short-lived connection that neither retries nor queues. */
async function adminCall(port: number, args: readonly string[], password?: string): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    commandTimeout: 3000,
    ...(password === undefined ? {} : { password }),
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const [command, ...rest] = args;
    return await client.call(command ?? 'PING', ...rest);
  } finally {
    client.disconnect();
  }
}

function runCli(
  binary: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    proc.stdout.on('data', append);
    proc.stderr.on('data', append);
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new ConvoBridgeError(`${binary} could not be run: ${error.message}`, {
          code: 'REDIS_SERVER_MISSING',
        }),
      );
    });
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** waitFor, with the last reason it was not ready yet in the message of the timeout error. */
async function waitUntil<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined | false>,
): Promise<T> {
  try {
    return await waitFor(probe, { timeoutMs, intervalMs: 100, what });
  } catch (error) {
    const last = error instanceof Error && error.cause !== undefined ? `: ${describeError(error.cause)}` : '';
    throw new ConvoBridgeError(`timed out after ${timeoutMs} ms waiting for ${what}${last}`, {
      code: 'REDIS_TOPOLOGY_TIMEOUT',
      cause: error,
    });
  }
}

function pidsOf(processes: readonly RedisNodeProcess[]): number[] {
  return processes.flatMap((process) => (process.pid === undefined ? [] : [process.pid]));
}
