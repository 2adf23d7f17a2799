import { describe, expect, it } from 'vitest';
import { describeMissingReplicas } from '../../../src/bridge/replica-check.js';

describe('describeMissingReplicas: one line naming the setting and the replicas found', () => {
  it('is null when every primary has enough', () => {
    expect(describeMissingReplicas([{ primary: 'a:1', replicas: 1 }], 1, 'cluster via a:1')).toBeNull();
    expect(describeMissingReplicas([], 1, 'x')).toBeNull();
  });

  it('names the primaries of a cluster that fall short, and the value that would work', () => {
    expect(
      describeMissingReplicas(
        [
          { primary: '127.0.0.1:7001', replicas: 1 },
          { primary: '127.0.0.1:7002', replicas: 0 },
          { primary: '127.0.0.1:7003', replicas: 1 },
        ],
        1,
        'cluster via 127.0.0.1:7001',
      ),
    ).toBe(
      'redis.replicas_ack is 1 but 1 of 3 primaries have fewer replicas: 127.0.0.1:7002 has 0; webhooks whose events are stored there are answered 503 until it has 1 replica(s) online (Redis WAIT); add replicas, or set redis.replicas_ack: 0 (then a failover can lose the last acknowledged events)',
    );
  });

  it("names a Sentinel setup's primary by the topology", () => {
    expect(
      describeMissingReplicas(
        [{ primary: undefined, replicas: 1 }],
        2,
        'primary "mymaster" via sentinels s1:26379',
      ),
    ).toMatch(
      /^redis\.replicas_ack is 2 but the primary \(primary "mymaster" via sentinels s1:26379\) has 1; .*set redis\.replicas_ack: 1 /,
    );
  });
});
