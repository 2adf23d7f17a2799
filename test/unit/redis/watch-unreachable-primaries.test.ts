import { EventEmitter } from 'node:events';
import type { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { keySlot } from '../../../src/redis/key-slot.js';
import {
  type PrimaryWatch,
  watchUnreachablePrimaries,
} from '../../../src/redis/watch-unreachable-primaries.js';

/** What the watch reads of an ioredis Cluster: its slot map, its node events, and EXISTS. */
class FakeCluster extends EventEmitter {
  slots: string[][] = [];
  answers = false;
  exists = async () => {
    if (!this.answers) throw new Error('Command timed out');
    return 0;
  };
  serve(key: string, node: string) {
    this.slots[keySlot(key)] = [node];
  }
}

const node = (address: string) => {
  const [host, port] = address.split(':');
  return Object.assign(new EventEmitter(), { options: { host, port: Number(port) } }) as unknown as Redis;
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('watchUnreachablePrimaries: which shards to refuse at once', () => {
  let watch: PrimaryWatch | undefined;
  afterEach(() => watch?.stop());

  const setUp = () => {
    const cluster = new FakeCluster();
    cluster.serve('{a}', '10.0.0.1:7000');
    cluster.serve('{b}', '10.0.0.2:7000');
    const changes: string[] = [];
    watch = watchUnreachablePrimaries(cluster as unknown as Cluster, ['{a}', '{b}'], {
      down: (index, primary) => changes.push(`down ${index} ${primary}`),
      up: (index) => changes.push(`up ${index}`),
    });
    return { cluster, changes };
  };

  it('a dropped connection to a primary marks its shards down, a new ready connection brings them up', async () => {
    const { cluster, changes } = setUp();
    cluster.emit('-node', node('10.0.0.1:7000'));
    expect(changes).toEqual(['down 0 10.0.0.1:7000']);
    const again = node('10.0.0.1:7000');
    cluster.emit('+node', again);
    expect(changes).toHaveLength(1); // created is not reachable: lazy connections connect later
    again.emit('ready');
    expect(changes).toEqual(['down 0 10.0.0.1:7000', 'up 0']);
  });

  it('a replica that took over the slot (a refreshed map) brings the shard up', () => {
    const { cluster, changes } = setUp();
    cluster.emit('-node', node('10.0.0.1:7000'));
    cluster.serve('{a}', '10.0.0.3:7000');
    cluster.emit('refresh');
    expect(changes).toEqual(['down 0 10.0.0.1:7000', 'up 0']);
  });

  it('a shard down is tried again by itself, and comes up when its primary answers', async () => {
    const { cluster, changes } = setUp();
    cluster.emit('-node', node('10.0.0.2:7000'));
    await tick();
    expect(changes).toEqual(['down 1 10.0.0.2:7000']);
    cluster.answers = true;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(changes).toEqual(['down 1 10.0.0.2:7000', 'up 1']);
  });

  it('a node that is no primary of these shards changes nothing', () => {
    const { cluster, changes } = setUp();
    cluster.emit('-node', node('10.0.0.9:7000'));
    expect(changes).toEqual([]);
  });
});
