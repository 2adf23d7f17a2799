/**
 * First step of `npm test` (issue 12: the README's test command must pass on a fresh machine).
 * The suites need programs npm cannot install: `redis-server` (integration tests and the fault
 * suite start private ones), Chromium at /usr/bin/chromium (the browser tests of the inbox page
 * and the queue dashboard, driven by playwright-core) and Prometheus's `promtool` and `prometheus` (the alerting rules'
 * unit tests and their end-to-end test, issue 29). When one is missing, this installs it with apt-get if it runs as
 * root on a machine with apt, and otherwise stops at once with the exact command to run, instead
 * of letting the suites fail minutes later.
 *
 * `TEST_TOOLS_DRY_RUN=1` prints what would be done without doing it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export interface Tool {
  /** What the suites need, for messages. */
  name: string;
  /** The apt package that provides it (Debian/Ubuntu). */
  aptPackage: string;
  /**
   * Install it without apt's recommended packages: Debian's `prometheus` recommends the node
   * exporter, which pulls in smartmontools, ipmitool and some thirty packages the tests do not use.
   */
  noRecommends?: boolean;
  present: () => boolean;
}

const runs = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

export const TOOLS: readonly Tool[] = [
  {
    name: 'redis-server',
    aptPackage: 'redis-server',
    present: () => runs('redis-server', ['--version']),
  },
  {
    // `redis-cli --cluster create` builds the test clusters (issue 14); apt's redis-server brings
    // it, a redis-server built or installed some other way may not.
    name: 'redis-cli',
    aptPackage: 'redis-tools',
    present: () => runs('redis-cli', ['--version']),
  },
  { name: `Chromium (${CHROMIUM_PATH})`, aptPackage: 'chromium', present: () => existsSync(CHROMIUM_PATH) },
  {
    // `npm run test:alerts` (promtool check/test rules) and test/integration/observe/alerts.e2e.test.ts.
    name: 'Prometheus (promtool and the server)',
    aptPackage: 'prometheus',
    noRecommends: true,
    present: () => runs('promtool', ['--version']) && runs('prometheus', ['--version']),
  },
];

export type ToolPlan =
  | { action: 'none' }
  | { action: 'install'; packages: string[]; commands: string[][] }
  | { action: 'stop'; message: string };

/** What to do about the missing tools. Pure, so that each case has a unit test. */
export function planTools(missing: readonly Tool[], host: { isRoot: boolean; hasApt: boolean }): ToolPlan {
  if (missing.length === 0) return { action: 'none' };
  const packages = missing.map((tool) => tool.aptPackage);
  const names = missing.map((tool) => tool.name).join(' and ');
  // One `apt-get install` per group: the tools with apt's recommended packages, then those without.
  const plain = missing.filter((tool) => !tool.noRecommends).map((tool) => tool.aptPackage);
  const lean = missing.filter((tool) => tool.noRecommends).map((tool) => tool.aptPackage);
  const installs = [plain, lean.length > 0 ? ['--no-install-recommends', ...lean] : []].filter(
    (group) => group.length > 0,
  );
  if (host.isRoot && host.hasApt) {
    return {
      action: 'install',
      packages,
      commands: [
        ['apt-get', 'update', '-qq'],
        ...installs.map((group) => ['apt-get', 'install', '-y', '-qq', ...group]),
      ],
    };
  }
  const how = host.hasApt
    ? `run: sudo apt-get update && ${installs.map((group) => `sudo apt-get install -y ${group.join(' ')}`).join(' && ')}`
    : `install ${packages.join(' and ')} with your package manager (Chromium must be at ${CHROMIUM_PATH})`;
  return {
    action: 'stop',
    message: `npm test needs ${names}, which npm cannot install and ${host.isRoot ? 'apt-get is not available here' : 'this user cannot install with apt-get (not root)'}; ${how}, then run npm test again`,
  };
}

function hasApt(): boolean {
  return spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
}

function main(): number {
  const missing = TOOLS.filter((tool) => !tool.present());
  const plan = planTools(missing, { isRoot: process.getuid?.() === 0, hasApt: hasApt() });
  const dryRun = process.env.TEST_TOOLS_DRY_RUN === '1';
  if (plan.action === 'none') {
    console.log('test tools: redis-server, Chromium, promtool and prometheus are installed');
    return 0;
  }
  if (plan.action === 'stop') {
    console.error(`test tools: ${plan.message}`);
    return 1;
  }
  console.log(`test tools: installing ${plan.packages.join(' ')} with apt-get (npm cannot install them)`);
  for (const [command = '', ...args] of plan.commands) {
    if (dryRun) {
      console.log(`test tools (dry run): ${[command, ...args].join(' ')}`);
      continue;
    }
    const result = spawnSync(command, args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) {
      console.error(
        `test tools: \`${[command, ...args].join(' ')}\` failed (exit ${result.status ?? result.signal}); run it by hand and read its error, then run npm test again`,
      );
      return 1;
    }
  }
  if (dryRun) return 0;
  const still = missing.filter((tool) => !tool.present());
  if (still.length > 0) {
    console.error(
      `test tools: ${still.map((tool) => tool.name).join(' and ')} still missing after apt-get install ${plan.packages.join(' ')}; install it by hand, then run npm test again`,
    );
    return 1;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(main());
