import { describe, expect, it } from 'vitest';
import { parseClusterNodes } from '../../../tools/redis/parse-cluster-nodes.js';

// Shape from https://redis.io/commands/cluster-nodes/ and a Redis 7.0 node after a failover.
const AFTER_FAILOVER = [
  '07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host-a slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected',
  '67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922',
  '292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [16383->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]',
  '6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 master,fail - 1426238316232 1426238315000 5 disconnected',
  'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 6 connected 0-5459 5460',
  '824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006 slave,fail? 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238317741 3 connected',
  '',
].join('\n');

describe('parseClusterNodes', () => {
  const views = parseClusterNodes(AFTER_FAILOVER);

  it('reads one view per line, with address, role and primary', () => {
    expect(views.map((view) => [view.port, view.role, view.primaryId?.slice(0, 6)])).toEqual([
      [30004, 'replica', 'e7d1ee'],
      [30002, 'primary', undefined],
      [30003, 'primary', undefined],
      [30005, 'primary', undefined],
      [30001, 'primary', undefined],
      [30006, 'replica', '292f8b'],
    ]);
    expect(views.every((view) => view.host === '127.0.0.1')).toBe(true);
  });

  it('reads slot ranges and single slots, and skips slots being migrated', () => {
    expect(views.find((view) => view.port === 30001)?.slots).toEqual([
      [0, 5459],
      [5460, 5460],
    ]);
    expect(views.find((view) => view.port === 30003)?.slots).toEqual([[10923, 16383]]);
    expect(views.find((view) => view.port === 30005)?.slots).toEqual([]);
  });

  it('marks fail and fail? as failed', () => {
    expect(views.filter((view) => view.failed).map((view) => view.port)).toEqual([30005, 30006]);
  });
});
