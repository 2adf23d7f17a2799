import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { type KeyLayout, layoutFor } from '../../src/queue/key-layout.js';
import { QUEUE_NAMES } from '../../src/queue/redis-keys.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { createRedisClient, type RedisTopology } from '../../src/redis/redis-connection.js';
import { type RedisServerHandle, startRedisServer } from '../../src/redis/start-redis-server.js';
import {
  type RedisClusterHandle,
  type RedisSentinelHandle,
  startRedisCluster,
  startRedisSentinel,
} from '../../tools/redis/redis-topology.js';
import { findFreePort, writeTempConfig } from './bridge-harness.js';

/**
 * What the topology tests of issue 29 share: a single Redis, a Sentinel setup or a Redis Cluster
 * started from `redis-server` for one test (its own ports and processes), the config block that
 * points a bridge at it, and a few webhooks to send. Every process started here is stopped by
 * `stop()`.
 */

export type TopologyKind = 'single' | 'sentinel' | 'cluster';

export interface TopologySpec {
  kind: TopologyKind;
  /** Replicas of the primary (Sentinel) or of each primary (Cluster); ignored for one Redis. */
  replicas: number;
  /** Queue shards (a cluster spreads them over its primaries). Default 6 on a cluster, else 1. */
  shards?: number;
}

export interface TestTopology {
  readonly kind: TopologyKind;
  /** The bridge's own description (what its config says), for clients made by the test. */
  readonly topology: RedisTopology;
  readonly shards: number;
  /** The `redis:` block of a bridge config (without `prefix`, `replicas_ack` and the like). */
  readonly redisBlock: string;
  readonly single?: RedisServerHandle;
  readonly sentinel?: RedisSentinelHandle;
  readonly cluster?: RedisClusterHandle;
  /** Shuts every data node down at once (SIGTERM: each writes its append-only file first). */
  killDataNodes(): Promise<void>;
  /** Starts the data nodes again from their files; resolves once they take writes. */
  restartDataNodes(): Promise<void>;
  /** A client of the topology (close it with disconnect()). */
  connect(): RedisClient;
  stop(): Promise<void>;
}

const address = (n: { host: string; port: number }) => `"${n.host}:${n.port}"`;

/** Starts the topology with the append-only file on (so that a restart keeps what was stored). */
export async function startTestTopology(spec: TopologySpec): Promise<TestTopology> {
  const connect = (topology: RedisTopology) => () => {
    const client = createRedisClient(topology, { maxRetriesPerRequest: 3 });
    client.on('error', () => {});
    return client;
  };
  switch (spec.kind) {
    case 'single': {
      const single = await startRedisServer({ appendOnly: true });
      const topology: RedisTopology = { kind: 'single', url: single.url };
      return {
        kind: 'single',
        topology,
        shards: spec.shards ?? 1,
        redisBlock: `redis:\n  url: ${single.url}\n  shards: ${spec.shards ?? 1}\n`,
        single,
        killDataNodes: () => single.kill('SIGTERM'),
        restartDataNodes: () => single.restart(),
        connect: connect(topology),
        stop: () => single.stop(),
      };
    }
    case 'sentinel': {
      const sentinel = await startRedisSentinel({ replicas: spec.replicas, sentinels: 3, appendOnly: true });
      const topology: RedisTopology = {
        kind: 'sentinel',
        sentinels: sentinel.sentinels,
        name: sentinel.name,
        tls: false,
        db: 0,
      };
      let primaryPort: number | undefined;
      return {
        kind: 'sentinel',
        topology,
        shards: spec.shards ?? 1,
        redisBlock: `redis:\n  sentinels: [ ${sentinel.sentinels.map(address).join(', ')} ]\n  name: ${sentinel.name}\n  shards: ${spec.shards ?? 1}\n`,
        sentinel,
        async killDataNodes() {
          primaryPort = (await sentinel.primary()).port;
          await Promise.all(sentinel.nodes.map((node) => sentinel.killNode(node.port, 'SIGTERM')));
        },
        async restartDataNodes() {
          // The sentinels still name the old primary (no replica was left to promote): it comes
          // back as the primary with its file; the replicas are not needed to read what it kept.
          await sentinel.restartNode(primaryPort ?? (sentinel.nodes[0]?.port as number));
        },
        connect: connect(topology),
        stop: () => sentinel.stop(),
      };
    }
    case 'cluster': {
      const cluster = await startRedisCluster({
        primaries: 3,
        replicasPerPrimary: spec.replicas,
        appendOnly: true,
      });
      const topology: RedisTopology = { kind: 'cluster', nodes: cluster.nodes, tls: false };
      const shards = spec.shards ?? 6;
      return {
        kind: 'cluster',
        topology,
        shards,
        redisBlock: `redis:\n  cluster:\n    nodes: [ ${cluster.nodes.map(address).join(', ')} ]\n  shards: ${shards}\n`,
        cluster,
        async killDataNodes() {
          await Promise.all(cluster.nodes.map((node) => cluster.killNode(node.port, 'SIGTERM')));
        },
        async restartDataNodes() {
          await Promise.all(cluster.nodes.map((node) => cluster.restartNode(node.port)));
        },
        connect: connect(topology),
        stop: () => cluster.stop(),
      };
    }
  }
}

export const TOPOLOGY_WEBHOOK = { path: '/webhooks/platform', secret: 'wh-topo-secret' } as const;

/**
 * A bridge config on the topology: one rule (a note on every customer message), the receiver on
 * `port`, the platform at `platformUrl`; `redisExtra` lines go under `redis:` (e.g. `replicas_ack: 0`).
 */
export async function writeTopologyConfig(options: {
  topology: TestTopology;
  prefix: string;
  platformUrl: string;
  port: number;
  graceSeconds?: number;
  redisExtra?: string;
}) {
  const text = [
    'platform:',
    `  base_url: ${options.platformUrl}`,
    '  auth: { scheme: headers, business_id: biz-topo, secret: sk-topo }',
    '  timeout: 60s',
    'receiver:',
    `  port: ${options.port}`,
    '  host: 127.0.0.1',
    `  path: ${TOPOLOGY_WEBHOOK.path}`,
    `  secrets: [ "${TOPOLOGY_WEBHOOK.secret}" ]`,
    `${options.topology.redisBlock.trimEnd()}`,
    `  prefix: ${options.prefix}`,
    ...(options.redisExtra ? [options.redisExtra.replace(/^/gm, '  ')] : []),
    'timezone: Asia/Jakarta',
    'rules:',
    '  - name: note-every-message',
    '    on: message_in',
    '    then:',
    '      - note: "seen by {{rule.name}}"',
    'worker:',
    `  shutdown_grace: ${options.graceSeconds ?? 5}s`,
    '',
  ].join('\n');
  return writeTempConfig(text);
}

/** A customer's message as the platform posts it (webhook-payloads.md §2), one conversation each. */
export function messageInBody(conversationId: string, text = 'halo'): string {
  return JSON.stringify({
    event: 'channel.message_in',
    timestamp: Math.floor(Date.now() / 1000),
    conversation_id: conversationId,
    conversation_label: 'Budi',
    need_human: 0,
    message: {
      id: `msg-${randomUUID()}`,
      sender_name: 'Budi',
      channel: { id: 'ch_wa_1', name: 'WhatsApp', engine: 'wa' },
      bisnis: { id: 'biz_42', name: 'Toko Maju' },
      content: { type: 'text', text },
    },
  });
}

/** POSTs one webhook to a receiver; resolves with the status. */
export async function postMessage(baseUrl: string, conversationId: string): Promise<number> {
  const response = await fetch(`${baseUrl}${TOPOLOGY_WEBHOOK.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: TOPOLOGY_WEBHOOK.secret },
    body: messageInBody(conversationId),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * A platform that takes every request and never answers it (until `close`), so that the jobs that
 * call it stay in flight: what a shutdown has to cut short.
 */
export async function startSilentPlatform() {
  const held = new Set<ServerResponse>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    held.add(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The events held by unfinished jobs (waiting, active, delayed...) of every queue shard. */
export async function unfinishedEvents(topology: TestTopology, prefix: string): Promise<number> {
  const layout: KeyLayout = layoutFor({ topology: topology.topology, prefix, shards: topology.shards });
  const redis = topology.connect();
  try {
    let events = 0;
    for (const shard of layout.all) {
      const queue = new Queue(QUEUE_NAMES.events, { connection: redis, prefix: shard.queuePrefix });
      const jobs = await queue.getJobs(['active', 'wait', 'delayed', 'prioritized']);
      for (const job of jobs) events += Array.isArray(job?.data?.events) ? job.data.events.length : 0;
      await queue.close();
    }
    return events;
  } finally {
    redis.disconnect();
  }
}

export { findFreePort };
