import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import { keySlot } from '../../../src/redis/key-slot.js';
import type { AdminAttempt, AdminDelivery } from '../support/admin-client.js';
import type { SentMessage } from '../support/expectations.js';
import { createFaultWorld, type FaultRedis, type FaultWorld } from '../support/fault-world.js';
import {
  check,
  percentile,
  type Scale,
  type Scenario,
  type ScenarioContext,
  seconds,
} from '../support/scenario.js';
import {
  byConversation,
  createConversations,
  mapLimit,
  planTraffic,
  sendMessages,
} from '../support/traffic.js';
import { actionFigures, actionProblems, verifyActions } from '../support/verify-actions.js';

/**
 * 7 and 8. The Redis primary is killed with SIGKILL while events flow, on a Sentinel setup (7) and
 * on a Redis Cluster (8); a replica is promoted and the bridge follows it. What is checked:
 * every event the platform saw acknowledged (200) has its actions done exactly once afterwards
 * (none lost although the primary died with writes its replica may not have had: the receiver
 * acknowledges a batch only once a replica confirmed it, Redis WAIT with `replicas_ack` 1), and
 * what could not be stored was answered 503 and redelivered by the platform later.
 *
 * With `replicas_ack: 1`, a primary whose only replica was promoted has no replica left: nothing
 * it stores can be acknowledged until one is back. The two rows take the two ways out:
 * - Sentinel (7): two replicas, the production shape (one remains after the promotion, Sentinel
 *   points it at the new primary); the killed node is restarted as a replica afterwards anyway.
 * - Cluster (8): one replica per primary (the shape of the e2e cluster project); the shards of the
 *   killed primary answer 503 from the kill until the killed node is restarted and has rejoined
 *   as the promoted node's replica, which the scenario does as soon as the failover is done. The
 *   other shards keep acknowledging meanwhile.
 */

/** Webhook retries 2 s, 5 s and 10 s apart (17 s in all): longer than kill + failover + rejoin. */
const RETRY_DELAYS: readonly [number, number, number] = [2_000, 5_000, 10_000];

interface Killed {
  port: number;
  /** Queue shards served by the killed primary (all, for Sentinel: one Redis holds everything). */
  shards: Set<number>;
  /** Whether the keys of no conversation (dead letters, rate budget, alarms) were on it too. */
  globalKeys: boolean;
}

interface FailoverTopology {
  redis: FaultRedis;
  describe: string;
  kill(world: FaultWorld): Promise<Killed>;
  waitForFailover(world: FaultWorld, oldPort: number): Promise<void>;
  restart(world: FaultWorld, port: number): Promise<void>;
  /** Keeps the Redis (and Sentinel) logs of a failed run; see keepLogs. */
  saveLogs(world: FaultWorld, dest: string): Promise<string[]>;
}

function sentinelOf(world: FaultWorld) {
  if (world.topology.kind !== 'sentinel') throw new Error('this scenario needs a Sentinel world');
  return world.topology.sentinel;
}

function clusterOf(world: FaultWorld) {
  if (world.topology.kind !== 'cluster') throw new Error('this scenario needs a cluster world');
  return world.topology.cluster;
}

const SENTINEL: FailoverTopology = {
  // down-after-milliseconds 5 s (Redis's default is 30 s): at 1 s a loaded machine's sentinel took the
  // just-promoted primary for down and failed over again, rolling back acknowledged writes.
  redis: { kind: 'sentinel', replicas: 2, downAfterMs: 5_000 },
  describe: '1 primary + 2 replicas + 3 sentinels',
  async kill(world) {
    const port = await sentinelOf(world).killPrimary('SIGKILL');
    return { port, shards: new Set(world.layout.all.map((s) => s.index)), globalKeys: true };
  },
  async waitForFailover(world, oldPort) {
    await sentinelOf(world).waitForFailover(oldPort, 30_000);
  },
  restart: (world, port) => sentinelOf(world).restartNode(port),
  saveLogs: (world, dest) => sentinelOf(world).saveLogs(dest),
};

const CLUSTER_SHARDS = 6;

const CLUSTER: FailoverTopology = {
  redis: { kind: 'cluster', primaries: 3, replicasPerPrimary: 1, shards: CLUSTER_SHARDS },
  describe: `3 primaries + 1 replica each, shards: ${CLUSTER_SHARDS}`,
  async kill(world) {
    const cluster = clusterOf(world);
    // The primary of shard 0 (its hash tag's slot), with whatever other shards it serves.
    const tag = world.layout.all[0]?.queuePrefix ?? '';
    const owner = (await cluster.primaries()).find((p) =>
      p.slots.some(([s, e]) => keySlot(tag) >= s && keySlot(tag) <= e),
    );
    if (!owner) throw new Error(`no primary serves shard 0 (${tag})`);
    const served = (key: string) => owner.slots.some(([s, e]) => keySlot(key) >= s && keySlot(key) <= e);
    const shards = new Set(world.layout.all.filter((s) => served(s.queuePrefix)).map((s) => s.index));
    const port = await cluster.killPrimaryOf(tag, 'SIGKILL');
    return { port, shards, globalKeys: served(world.keys.deadIndex) };
  },
  async waitForFailover(world, oldPort) {
    await clusterOf(world).waitForFailover(oldPort, 30_000);
  },
  restart: (world, port) => clusterOf(world).restartNode(port),
  saveLogs: (world, dest) => clusterOf(world).saveLogs(dest),
};

const ms = (iso: string) => Date.parse(iso);

const LOGS_DIR = fileURLToPath(new URL('../results/logs/', import.meta.url));

/**
 * A failover row that fails keeps what Redis and Sentinel logged (promotions, syncs, role changes)
 * in test/faults/results/logs/ (ignored by git), named in the problems: one run of row 7 once lost
 * and repeated events in a way no later run reproduced (docs/faults.md).
 */
async function keepLogs(topology: FailoverTopology, world: FaultWorld, stem: string): Promise<string> {
  const dest = join(LOGS_DIR, `${stem}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  try {
    const files = await topology.saveLogs(world, dest);
    return `Redis and Sentinel logs of this run (${files.length} files): ${dest}`;
  } catch (error) {
    return `the Redis logs could not be kept (${error instanceof Error ? error.message : String(error)})`;
  }
}

async function runFailover(
  topology: FailoverTopology,
  scale: Scale,
  { log, signal }: ScenarioContext,
  seed: number,
  stem: string,
) {
  const events = scale === 'full' ? 2_000 : 300;
  const rate = scale === 'full' ? 40 : 25;
  const plan = planTraffic({ events, perConversation: 4, seed, stem });
  const world = await createFaultWorld({
    config: {
      hours: 'closed',
      worker: { lock_duration: '5s', stalled_interval: '2s', backoff: '{ base: 200ms, max: 2s }' },
    },
    processes: ['serve', 'work', 'work'],
    randomSeed: seed,
    webhookRetryDelaysMs: RETRY_DELAYS,
    redis: topology.redis,
    signal,
  });
  try {
    await createConversations(world.admin, plan.conversations);
    // 10% of the events are delivered again by the platform: those already sent at the kill right
    // after it (their copies meet the failover), the others once everything was sent.
    const random = createSeededRandom(seed + 1);
    const chosen = new Set(
      plan.messages
        .map((_message, index) => ({ index, key: random() }))
        .sort((a, b) => a.key - b.key)
        .slice(0, Math.round(events / 10))
        .map((entry) => entry.index),
    );
    const sentByIndex = new Map<number, SentMessage>();
    const sendStarted = Date.now();
    const sending = sendMessages(world.admin, plan.messages, {
      concurrency: 8,
      ratePerSecond: rate,
      onSent: (message, index) => sentByIndex.set(index, message),
    });
    const redeliveredIndexes = new Set<number>();
    const redeliver = async (indexes: number[]) => {
      const deliveries = await world.admin.deliveries();
      const original = new Map(
        deliveries.filter((d) => d.redeliveryOf === null).map((d) => [d.payload.message.id, d.id]),
      );
      await mapLimit(indexes, 4, async (index) => {
        const message = sentByIndex.get(index);
        const id = message && original.get(message.messageId);
        if (id === undefined) throw new Error(`no delivery recorded for message ${index}`);
        redeliveredIndexes.add(index);
        await world.admin.redeliver(id);
      });
    };

    // The kill lands a third of the way into the traffic.
    await world.waitUntil(() => sentByIndex.size >= events / 3, {
      timeoutMs: 60_000 + (events / rate) * 1000,
      intervalMs: 50,
      what: 'a third of the traffic to be sent',
    });
    const killedAt = Date.now();
    const killed = await topology.kill(world);
    log(
      `primary ${killed.port} killed after ${sentByIndex.size} messages (shards ${[...killed.shards].join(',')}${killed.globalKeys ? ', global keys' : ''})`,
    );
    const firstWave = redeliver([...chosen].filter((index) => sentByIndex.has(index)));
    await topology.waitForFailover(world, killed.port);
    const promotedAt = Date.now();
    log(`replica promoted ${promotedAt - killedAt} ms after the kill`);
    await topology.restart(world, killed.port);
    const rejoinedAt = Date.now();
    log(
      `killed node ${killed.port} back (a replica of the elected primary, or elected itself) ${rejoinedAt - killedAt} ms after the kill`,
    );
    await firstWave;
    await sending;
    await redeliver([...chosen].filter((index) => !redeliveredIndexes.has(index)));
    log(`${redeliveredIndexes.size} events redelivered`);
    await world.settle(90_000 + events * 40, 'the bridge to finish every event after the failover');

    const sent = [...sentByIndex.entries()].sort(([a], [b]) => a - b).map(([, message]) => message);
    const deliveries = await world.admin.deliveries();
    const ackedIds = new Set(
      deliveries.filter((d) => d.state === 'delivered').map((d) => d.payload.message.id),
    );
    const acked = sent.filter((m) => ackedIds.has(m.messageId));
    const givenUp = sent.filter((m) => !ackedIds.has(m.messageId));
    // A conversation with an event never acknowledged is left out of the exact count (that event
    // may or may not have been stored); every acknowledged event elsewhere is checked.
    const unsure = new Set(givenUp.map((m) => m.conversationId));
    const checked = [...byConversation(acked).keys()].filter((id) => !unsure.has(id));
    const result = await verifyActions(world, acked, 'closed', checked);

    const affected = (d: AdminDelivery) => killed.shards.has(world.layout.shardOf(d.conversationId).index);
    const attemptsOf = (list: AdminDelivery[]) => list.flatMap((d) => d.attempts);
    const all = attemptsOf(deliveries);
    const unavailable = all.filter((a) => a.httpStatus === 503);
    const noAnswer = all.filter((a) => a.httpStatus === null);
    const answerTimes = unavailable.map((a) => a.durationMs);
    const onKilled = attemptsOf(deliveries.filter(affected));
    const elsewhere503 = attemptsOf(deliveries.filter((d) => !affected(d))).filter(
      (a) => a.httpStatus === 503,
    ).length;
    // The failover as the bridge's clients saw it: from the first 503 of a shard on the killed
    // primary to the first 200 of such a shard after it.
    const byTime = (a: AdminAttempt, b: AdminAttempt) => ms(a.at) - ms(b.at);
    const first503 = onKilled.filter((a) => a.httpStatus === 503).sort(byTime)[0];
    const last503 = onKilled
      .filter((a) => a.httpStatus === 503)
      .sort(byTime)
      .at(-1);
    const firstOkAfter =
      first503 === undefined
        ? undefined
        : onKilled.filter((a) => a.httpStatus === 200 && ms(a.at) > ms(first503.at)).sort(byTime)[0];
    const seenMs =
      first503 && firstOkAfter ? ms(firstOkAfter.at) + firstOkAfter.durationMs - ms(first503.at) : null;
    const redelivered = deliveries.filter((d) => d.redeliveryOf !== null);
    const redeliveredAcked = redelivered.filter((d) => d.state === 'delivered').length;
    const t = result.tally;
    const lost = t.missing + result.forwards.missing;

    const problems = actionProblems(result, { resentAllowed: true });
    check(problems, first503 !== undefined, 'no delivery was answered 503 after the primary was killed');
    check(problems, seenMs !== null, 'the shards of the killed primary never answered 200 again');
    check(
      problems,
      givenUp.length === 0,
      `${givenUp.length} events never acknowledged (given up after 4 attempts)`,
    );
    check(problems, noAnswer.length === 0, `${noAnswer.length} webhook attempts got no answer at all`);
    check(
      problems,
      redeliveredAcked === redelivered.length,
      `${redelivered.length - redeliveredAcked} redeliveries not acknowledged`,
    );
    if (problems.length > 0) problems.push(await keepLogs(topology, world, stem));
    return {
      scale: `${sent.length} events, ${plan.conversations.length} conversations, ${topology.describe}`,
      figures: {
        'primary killed': `${killed.port} after ${Math.round((killedAt - sendStarted) / 1000)} s of traffic (shards ${[...killed.shards].join(',')}${killed.globalKeys ? ' + global keys' : ''})`,
        'replica promoted after': seconds(promotedAt - killedAt),
        'killed node back after': seconds(rejoinedAt - killedAt),
        'failover seen by the bridge (first 503 to first 200)': seenMs === null ? 'never' : seconds(seenMs),
        '503 answers': `${unavailable.length} (p50 ${percentile(answerTimes, 50)} ms, max ${Math.max(0, ...answerTimes)} ms; last ${last503 ? seconds(ms(last503.at) - killedAt) : '-'} after the kill; other shards ${elsewhere503})`,
        'no answer': noAnswer.length,
        redelivered: `${redeliveredIndexes.size} (${redeliveredAcked}/${redelivered.length} acked)`,
        'acked events checked': `${acked.filter((m) => !unsure.has(m.conversationId)).length}/${acked.length}`,
        lost,
        duplicated: t.repeated,
        ...actionFigures(result),
      },
      expected:
        'every acked event done once (0 lost, 0 duplicated), 503 until stored on a replica, 0 given up, 0 dead letters',
      passed: problems.length === 0,
      problems,
      worst: {
        'failover seen by the bridge': seenMs === null ? 'never' : seconds(seenMs),
        'slowest 503 answer': `${Math.max(0, ...answerTimes)} ms`,
        'most attempts of one delivery': Math.max(0, ...deliveries.map((d) => d.attempts.length)),
      },
    };
  } finally {
    await world.close();
  }
}

export const sentinelFailover: Scenario = {
  id: 7,
  name: 'Sentinel failover',
  budgetMs: (scale) => (scale === 'full' ? 10 * 60_000 : 150_000),
  run: (scale, context) => runFailover(SENTINEL, scale, context, 707, 'sf'),
};

export const clusterFailover: Scenario = {
  id: 8,
  name: 'Cluster failover',
  budgetMs: (scale) => (scale === 'full' ? 10 * 60_000 : 150_000),
  run: (scale, context) => runFailover(CLUSTER, scale, context, 808, 'cf'),
};
