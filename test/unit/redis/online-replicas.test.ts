import { describe, expect, it } from 'vitest';
import { onlineReplicas } from '../../../src/redis/replica-count.js';

// `INFO replication` of a primary (Redis 7), as the replicas gauge reads it (issue 29).
const info = (...replicas: string[]) =>
  [
    '# Replication',
    'role:master',
    `connected_slaves:${replicas.length}`,
    ...replicas.map(
      (state, index) => `slave${index}:ip=10.0.0.${index + 2},port=6379,state=${state},offset=812,lag=0`,
    ),
    'master_failover_state:no-failover',
    'master_repl_offset:812',
    '',
  ].join('\r\n');

describe('onlineReplicas (what WAIT can count)', () => {
  it.each([
    ['no replica', info(), 0],
    ['one online', info('online'), 1],
    ['two online', info('online', 'online'), 2],
    ['one online, one still loading its first copy', info('online', 'wait_bgsave'), 1],
    ['one receiving the bulk copy', info('send_bulk'), 0],
    [
      'a replica (role:slave) has none',
      '# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nslave_read_only:1\r\n',
      0,
    ],
  ])('%s', (_name, text, expected) => {
    expect(onlineReplicas(text)).toBe(expected);
  });

  it('reads lines ended by \\n alone too', () => {
    expect(onlineReplicas(info('online').replaceAll('\r\n', '\n'))).toBe(1);
  });
});
