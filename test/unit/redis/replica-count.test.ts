import { describe, expect, it } from 'vitest';
import { onlineReplicas } from '../../../src/redis/replica-count.js';

describe('onlineReplicas: what WAIT can count on, from INFO replication', () => {
  it.each([
    [
      'a primary without replicas',
      '# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n',
      0,
    ],
    [
      'two replicas online',
      '# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1,port=7004,state=online,offset=98,lag=0\r\nslave1:ip=127.0.0.1,port=7005,state=online,offset=98,lag=1\r\n',
      2,
    ],
    [
      'one online, one still loading its first copy',
      'role:master\nconnected_slaves:2\nslave0:ip=10.0.0.2,port=6379,state=wait_bgsave,offset=0,lag=0\nslave1:ip=10.0.0.3,port=6379,state=online,offset=12,lag=0\n',
      1,
    ],
  ])('%s', (_name, info, expected) => {
    expect(onlineReplicas(info)).toBe(expected);
  });
});
