import type { Cluster, Redis } from 'ioredis';
import { keySlot } from './key-slot.js';

export interface PrimaryWatchEvents {
  /** The primary serving `keys[index]`'s slot is known unreachable (`primary`: host:port). */
  down(index: number, primary: string): void;
  /** It answers again, or another primary serves the slot now (a failover). */
  up(index: number): void;
}

export interface PrimaryWatch {
  stop(): void;
}

/** How often a slot whose primary is down is tried again (one command, off the webhook path). */
const PROBE_INTERVAL_MS = 1_000;

const nodeKey = (node: Redis) => `${node.options.host}:${node.options.port}`;

/**
 * Tells, from what a cluster client already knows, when the primary serving one of `keys` is
 * unreachable, and when it is back: without this a command for such a slot is bounced between
 * the nodes (MOVED to the dead primary, a reconnect, a refresh, again) until its timeout, so a
 * webhook waited the whole enqueue timeout for its 503.
 *
 * ioredis drops a node's connection when it closes (cluster node connections do not reconnect):
 * that primary is then down. It is up again when a new connection to it is ready, or once another
 * primary serves the slot (the client's map of the slots changed). While a slot is down it is tried
 * once a second with a command of its own (EXISTS of its key), which also lets the client follow a
 * failover. Nothing here runs for a slot whose primary is reachable.
 */
export function watchUnreachablePrimaries(
  cluster: Cluster,
  keys: readonly string[],
  events: PrimaryWatchEvents,
): PrimaryWatch {
  const slots = keys.map((key) => keySlot(key));
  const unreachable = new Set<string>();
  const isDown = keys.map(() => false);
  let probe: NodeJS.Timeout | undefined;
  let probing = false;
  let stopped = false;

  const ownerOf = (index: number) => cluster.slots[slots[index] as number]?.[0];
  const schedule = (ms: number) => {
    if (probe !== undefined || stopped) return;
    probe = setTimeout(() => {
      probe = undefined;
      void tryAgain();
    }, ms);
    probe.unref();
  };
  const recompute = () => {
    if (stopped) return;
    keys.forEach((_key, index) => {
      const owner = ownerOf(index);
      const down = owner !== undefined && unreachable.has(owner);
      if (down && !isDown[index]) {
        isDown[index] = true;
        events.down(index, owner);
      } else if (!down && isDown[index]) {
        isDown[index] = false;
        events.up(index);
      }
    });
    // The first try at once; then tryAgain schedules the next while one is down.
    if (!probing && isDown.some(Boolean)) schedule(0);
  };
  const tryAgain = async () => {
    probing = true;
    try {
      await Promise.all(
        keys.map(async (key, index) => {
          if (!isDown[index]) return;
          const owner = ownerOf(index);
          const answered = await cluster.exists(key).then(
            () => true,
            () => false,
          );
          // The command may have found the slot's new primary (a failover): `recompute` looks.
          if (answered && owner !== undefined && ownerOf(index) === owner) unreachable.delete(owner);
        }),
      );
    } finally {
      recompute();
      probing = false;
      if (isDown.some(Boolean)) schedule(PROBE_INTERVAL_MS);
    }
  };
  const onGone = (node: Redis) => {
    unreachable.add(nodeKey(node));
    recompute();
  };
  const onAdded = (node: Redis) => {
    node.once('ready', () => {
      if (unreachable.delete(nodeKey(node))) recompute();
    });
  };
  cluster.on('-node', onGone);
  cluster.on('+node', onAdded);
  cluster.on('refresh', recompute);
  return {
    stop() {
      stopped = true;
      clearTimeout(probe);
      cluster.off('-node', onGone);
      cluster.off('+node', onAdded);
      cluster.off('refresh', recompute);
    },
  };
}
