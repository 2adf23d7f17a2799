import { describe, expect, it } from 'vitest';
import { planTools, TOOLS, type Tool } from '../../support/ensure-test-tools.js';

const redis: Tool = { name: 'redis-server', aptPackage: 'redis-server', present: () => false };
const chromium: Tool = { name: 'Chromium (/usr/bin/chromium)', aptPackage: 'chromium', present: () => false };
const prometheus: Tool = {
  name: 'Prometheus (promtool and the server)',
  aptPackage: 'prometheus',
  noRecommends: true,
  present: () => false,
};

describe('planTools (the first step of npm test)', () => {
  it('does nothing when every tool is there', () => {
    expect(planTools([], { isRoot: false, hasApt: false })).toEqual({ action: 'none' });
  });

  it('installs what is missing with apt-get when it runs as root', () => {
    expect(planTools([redis, chromium], { isRoot: true, hasApt: true })).toEqual({
      action: 'install',
      packages: ['redis-server', 'chromium'],
      commands: [
        ['apt-get', 'update', '-qq'],
        ['apt-get', 'install', '-y', '-qq', 'redis-server', 'chromium'],
      ],
    });
  });

  it('installs Prometheus without its recommended packages (the node exporter and its thirty)', () => {
    expect(planTools([redis, prometheus], { isRoot: true, hasApt: true })).toEqual({
      action: 'install',
      packages: ['redis-server', 'prometheus'],
      commands: [
        ['apt-get', 'update', '-qq'],
        ['apt-get', 'install', '-y', '-qq', 'redis-server'],
        ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'prometheus'],
      ],
    });
    expect(planTools([prometheus], { isRoot: true, hasApt: true })).toMatchObject({
      commands: [
        ['apt-get', 'update', '-qq'],
        ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'prometheus'],
      ],
    });
  });

  it('names the same two installs when it cannot run them', () => {
    expect(planTools([chromium, prometheus], { isRoot: false, hasApt: true })).toEqual({
      action: 'stop',
      message:
        'npm test needs Chromium (/usr/bin/chromium) and Prometheus (promtool and the server), which npm cannot install and this user cannot install with apt-get (not root); run: sudo apt-get update && sudo apt-get install -y chromium && sudo apt-get install -y --no-install-recommends prometheus, then run npm test again',
    });
  });

  it('lists the real tools, Prometheus among them', () => {
    expect(TOOLS.map((tool) => tool.aptPackage)).toEqual([
      'redis-server',
      'redis-tools',
      'chromium',
      'prometheus',
    ]);
  });

  it.each([
    [
      { isRoot: false, hasApt: true },
      'npm test needs Chromium (/usr/bin/chromium), which npm cannot install and this user cannot install with apt-get (not root); run: sudo apt-get update && sudo apt-get install -y chromium, then run npm test again',
    ],
    [
      { isRoot: true, hasApt: false },
      'npm test needs Chromium (/usr/bin/chromium), which npm cannot install and apt-get is not available here; install chromium with your package manager (Chromium must be at /usr/bin/chromium), then run npm test again',
    ],
  ])('otherwise stops at once with the exact command (%j)', (host, message) => {
    expect(planTools([chromium], host)).toEqual({ action: 'stop', message });
  });
});
