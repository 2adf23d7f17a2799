import { redactUrl } from '../base/redact-url.js';
import type { BridgeConfig } from '../config/config-schema.js';
import { layoutFor } from '../queue/key-layout.js';
import { describeTopology, type RedisTopology } from '../redis/redis-connection.js';

/**
 * What `validate` says about `redis:`: which topology, how keys are laid out, what an
 * acknowledged webhook is guaranteed, and the choices that would hurt.
 */
export function describeRedisConfig(redis: BridgeConfig['redis']): string[] {
  const { topology } = redis;
  const layout = layoutFor(redis);
  const lines: string[] = [];
  const password = (p: string | undefined, user: string | undefined) =>
    p === undefined ? 'no password' : `password set${user ? ` (user ${user})` : ''}`;
  // Whether a password is set and for which user, never the password (a URL's included).
  const auth = (t: RedisTopology) =>
    t.kind === 'single'
      ? ''
      : `${password(t.password, t.username)}${
          t.kind === 'sentinel' && t.sentinelPassword !== undefined
            ? `, sentinels: ${password(t.sentinelPassword, t.sentinelUsername)}`
            : ''
        }, TLS ${t.tls ? 'on' : 'off'}`;
  switch (topology.kind) {
    case 'single':
      lines.push(`redis: ${redactUrl(topology.url)}: one Redis (prefix ${redis.prefix})`);
      break;
    case 'sentinel':
      lines.push(
        `redis: Sentinel: ${describeTopology(topology)}, db ${topology.db}, ${auth(topology)} (prefix ${redis.prefix}); a failover is followed by asking the sentinels again`,
      );
      if (topology.sentinels.length < 3) {
        lines.push(
          `  warning: ${topology.sentinels.length} sentinel(s) listed: with fewer than 3 (a quorum of 2) one lost sentinel can stop a failover; list every sentinel you run`,
        );
      }
      break;
    case 'cluster':
      lines.push(
        `redis: Redis Cluster, ${describeTopology(topology)} (the rest is discovered), ${auth(topology)} (prefix ${redis.prefix})`,
      );
      if (redis.shards === 1) {
        lines.push(
          '  warning: redis.shards is 1: every conversation lives in one hash slot, so one primary does all the work; set it to a multiple of your primaries (e.g. 6 for 3)',
        );
      }
      break;
  }
  lines.push(`  keys: ${layout.describe()}`);
  lines.push(
    redis.replicasAck > 0
      ? `  a webhook is acknowledged once its event is on the primary and ${redis.replicasAck} replica(s) (WAIT, up to ${redis.replicasAckTimeoutMs} ms; else 503 and the platform redelivers)`
      : `  a webhook is acknowledged once its event is on the primary${topology.kind === 'single' ? '' : ' (replicas_ack 0: a failover right after can lose it)'}`,
  );
  return lines;
}
