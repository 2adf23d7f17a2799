import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const README = readFileSync('README.md', 'utf8');

/** Variables the README's runs assume unset (a fresh shell after the two set-up commands). */
const CLEAN_ENV: NodeJS.ProcessEnv = { ...process.env };
for (const name of [
  'PLATFORM_BASE_URL',
  'BUSINESS_ID',
  'SECRET_KEY',
  'WEBHOOK_SECRET',
  'PORT',
  'RECEIVER_HOST',
  'REDIS_URL',
  'CRM_WEBHOOK_URL',
  'CRM_SECRET',
  'CONVO_BRIDGE_CONFIG',
  'LOG_LEVEL',
]) {
  delete CLEAN_ENV[name];
}

interface Session {
  command: string;
  args: string[];
  /** The lines the README shows after the command (up to the next `$ ` or the end of the block). */
  shown: string[];
}

/** Every `$ npx convo-bridge ...` in a fenced block, with the output the README shows for it. */
function readmeSessions(): Session[] {
  const sessions: Session[] = [];
  for (const block of README.matchAll(/```[a-z]*\n([\s\S]*?)```/g)) {
    const lines = (block[1] ?? '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (!line.startsWith('$ ')) continue;
      const command = line.slice(2);
      const shown: string[] = [];
      for (let j = i + 1; j < lines.length && !(lines[j] ?? '').startsWith('$ '); j++)
        shown.push(lines[j] ?? '');
      sessions.push({ command, args: command.split(/\s+/).slice(2), shown });
    }
  }
  return sessions;
}

async function npx(args: string[]) {
  // As the README says to run it: npx resolves the clone's own bin (dist/cli.js, built by npm install).
  const result = await run('npx', ['--no-install', 'convo-bridge', ...args], {
    env: CLEAN_ENV,
    timeout: 60_000,
  }).catch((error: { code: number; stdout: string; stderr: string }) => error);
  return { code: 'code' in result && typeof result.code === 'number' ? result.code : 0, ...result };
}

describe('every convo-bridge command the README shows works as written (issue 13)', () => {
  const sessions = readmeSessions();

  // npx's first run in a clone installs the clone into its cache (a link) and runs its `prepare`
  // (the build); the commands below then run side by side, which that first install must not race.
  beforeAll(async () => {
    const first = await npx(['--version']);
    expect(first.code, `${first.stdout}${first.stderr}`).toBe(0);
  }, 120_000);

  it('finds the tour commands, all written with npx (convo-bridge is not on the PATH after set-up)', () => {
    expect(sessions.map((s) => s.args[0])).toEqual([
      'validate',
      'validate',
      'explain',
      'explain',
      'test',
      'test',
      'backtest',
      'backtest',
      'backtest',
    ]);
    for (const s of sessions) expect(s.command).toMatch(/^npx convo-bridge /);
    // Prose and code outside the synopsis table never tell a newcomer to type a bare `convo-bridge`.
    const bare = README.split('\n').filter(
      (line) =>
        /(^|[`$] ?)convo-bridge (start|serve|work|validate|explain|schema|dlq|quarantine|timers|emulator|demo|send-test-webhook|--)/.test(
          line,
        ) &&
        !line.startsWith('| `convo-bridge') &&
        !/npx convo-bridge/.test(line),
    );
    expect(bare).toEqual([]);
  });

  // Each command is its own process (npx then node): they run a few at a time (vitest's
  // maxConcurrency), with the test's own `expect`.
  it.concurrent.for(readmeSessions().map((s) => [s.command, s] as const))(
    '%s',
    async ([, session], { expect }) => {
      const result = await npx(session.args);
      const output = `${result.stdout}${result.stderr}`.split('\n').map((line) => line.trimEnd());
      const shown = session.shown
        .map((line) => line.trimEnd())
        .filter((line) => line !== '' && line !== '...');
      for (const line of shown) expect(output, `README shows: ${line}`).toContain(line);
      // A block that shows an "invalid" verdict, a failed rule test or a changed golden run
      // expects exit 1; the others succeed.
      const fails = shown.some((line) =>
        /is invalid|rule test\(s\) failed|event\(s\) differ from/.test(line),
      );
      expect(result.code).toBe(fails ? 1 : 0);
    },
  );

  it.concurrent.for([
    'start',
    'serve',
    'work',
    'validate',
    'explain',
    'test',
    'backtest',
    'schema',
    'dlq',
    'events',
    'shadow',
    'quarantine',
    'timers',
    'emulator',
    'demo',
    'send-test-webhook',
  ])('the synopsis table lists %s, and its --help works through npx', async (command, { expect }) => {
    expect(README).toContain(`| \`convo-bridge ${command}`);
    const result = await npx([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: convo-bridge ${command}`);
  });

  it('npm install builds dist/ (prepare), which npx convo-bridge runs', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.bin['convo-bridge']).toBe('dist/cli.js');
  });

  it('npx convo-bridge --version prints the version', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const result = await npx(['--version']);
    expect(result.stdout.trim()).toBe(pkg.version);
  });
});
