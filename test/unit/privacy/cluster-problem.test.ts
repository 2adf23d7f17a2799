import { describe, expect, it } from 'vitest';
import { clusterProblem } from '../../../src/privacy/check-every-node.js';

const line = (port: number, flags: string, link: string, slots: string) =>
  `id${port} 127.0.0.1:${port}@${port + 10000} ${flags} - 0 0 1 ${link} ${slots}`;

describe('clusterProblem (forget refuses a cluster it cannot search whole)', () => {
  it('is null for a whole cluster', () => {
    const text = [
      line(7000, 'myself,master', 'connected', '0-5460'),
      line(7001, 'master', 'connected', '5461-10922'),
      line(7002, 'master', 'connected', '10923-16383'),
      line(7003, 'slave', 'connected', ''),
    ].join('\n');
    expect(clusterProblem(text)).toBeNull();
  });

  it.each([
    ['fail', 'connected'],
    ['fail?', 'connected'],
    ['', 'disconnected'],
  ])('names a primary flagged %j or with its link %s', (flag, link) => {
    const text = [
      line(7000, 'myself,master', 'connected', '0-5460'),
      line(7001, `master${flag ? `,${flag}` : ''}`, link, '5461-10922'),
      line(7002, 'master', 'connected', '10923-16383'),
    ].join('\n');
    expect(clusterProblem(text)).toBe('primary 127.0.0.1:7001 is down or unreachable');
  });

  it('counts slots no primary serves', () => {
    const text = [
      line(7000, 'myself,master', 'connected', '0-5460 [5461->-abc]'),
      line(7002, 'master', 'connected', '10923-16383'),
    ].join('\n');
    expect(clusterProblem(text)).toBe('5462 of 16384 slots have no primary');
  });
});
