import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { startRedisCluster } from '../src/shared/redis-topology.js';

const c = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
const r = new Cluster(c.nodes.map((n) => ({ ...n })));
const q = new Queue('events', { connection: r, prefix: '{ops:0}' });
const t = new Queue('timers', { connection: r, prefix: '{ops:0}' });
for (const [n, f] of [
  ['workers', () => q.getWorkersCount()],
  ['counts', () => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')],
  ['tcounts', () => t.getJobCounts('waiting', 'active', 'prioritized')],
  ['add', () => q.add('x', {}, { jobId: 'j1' })],
  ['counts2', () => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')],
  ['delayedjobs', () => t.getJobs(['delayed'])],
] as const) {
  try {
    console.log(n, JSON.stringify(await (f as () => Promise<unknown>)()).slice(0, 100));
  } catch (e) {
    console.log(n, 'ERR', (e as Error).message);
  }
}
await q.close();
await t.close();
r.disconnect();
await c.stop();
