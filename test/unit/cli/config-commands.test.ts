import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { configJsonSchema } from '../../../src/config/config-json-schema.js';
import { resolveConfigPath } from '../../../src/config/resolve-config-path.js';
import { configFixture } from '../../fixtures/config/index.js';

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const EXAMPLE_ENV = {
  PLATFORM_BASE_URL: 'https://api.example.com',
  BUSINESS_ID: 'biz-1',
  SECRET_KEY: 'secret-key',
  WEBHOOK_SECRET: 'webhook-secret',
};
const saved = { ...process.env };

beforeEach(() => {
  for (const name of [...Object.keys(EXAMPLE_ENV), 'CONVO_BRIDGE_CONFIG']) delete process.env[name];
});
afterEach(() => {
  for (const name of [...Object.keys(EXAMPLE_ENV), 'CONVO_BRIDGE_CONFIG']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('convo-bridge validate', () => {
  it('exits 0 on the example with its variables set, and never prints secrets', async () => {
    Object.assign(process.env, EXAMPLE_ENV);
    const { code, stdout, stderr } = await run(['validate', '--no-redis', 'config/bridge.example.yaml']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.split('\n')[0]).toBe('config OK: 4 rules (config/bridge.example.yaml)');
    expect(stdout).toContain('  rule escalate-complaints: on message_in, 4 actions, stop\n');
    expect(stdout).not.toContain('secret-key');
    expect(stdout).not.toContain('webhook-secret');
  });

  it('exits 0 with --allow-missing-env and lists what is still to set', async () => {
    const { code, stdout, stderr } = await run([
      'validate',
      '--no-redis',
      '--config',
      'config/bridge.example.yaml',
      '--allow-missing-env',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('config OK: 4 rules');
    expect(stderr.trim().split('\n')).toEqual([
      'warning: config/bridge.example.yaml:3:13: ${PLATFORM_BASE_URL} is not set (checked with a placeholder); set it before starting',
      'warning: config/bridge.example.yaml:5:41: ${BUSINESS_ID} is not set (checked with a placeholder); set it before starting',
      'warning: config/bridge.example.yaml:5:65: ${SECRET_KEY} is not set (checked with a placeholder); set it before starting',
      'warning: config/bridge.example.yaml:9:15: ${WEBHOOK_SECRET} is not set (checked with a placeholder); set it before starting',
    ]);
  });

  it('says when it could not look in Redis for held jobs, and still exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-held-'));
    const file = join(dir, 'bridge.yaml');
    writeFileSync(
      file,
      `platform: { base_url: https://api.example.com, auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
redis: { url: "redis://127.0.0.1:1" }
`,
    );
    const { code, stdout, stderr } = await run(['validate', file]);
    expect(code).toBe(0);
    expect(stdout).toContain('config OK');
    expect(stderr).toMatch(
      /^note: jobs held for businesses not in this config: not checked, Redis at 127\.0\.0\.1:1 db 0 did not answer/,
    );
    const skipped = await run(['validate', '--no-redis', file]);
    expect(skipped.stderr).toBe('');
  });

  it('exits 1 and prints every problem as file:line:column: message', async () => {
    const file = configFixture('unknown-destination');
    const { code, stdout, stderr } = await run(['validate', file]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      `${file}:12:18: rules.0.then.0.forward: unknown destination "crmm": define it under destinations: (defined: crm)`,
      `${file}:14:28: rules.0.then.1.then.0.forward: unknown destination "slack": define it under destinations: (defined: crm)`,
      `convo-bridge: config ${file} is invalid: 2 problems`,
    ]);
  });

  it('hints at --allow-missing-env when only variables are missing', async () => {
    const { code, stderr } = await run(['validate', 'config/bridge.example.yaml']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'hint: set the variables, or add --allow-missing-env to check the rest with placeholders',
    );
  });

  it('uses $CONVO_BRIDGE_CONFIG when there is no --config and no config/bridge.yaml', async () => {
    process.env.CONVO_BRIDGE_CONFIG = 'config/demo.yaml';
    const { code, stdout } = await run(['validate', '--no-redis']);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe('config OK: 5 rules (config/demo.yaml)');
  });

  it.each([
    ['--config wins', 'a.yaml', { CONVO_BRIDGE_CONFIG: 'c.yaml' }, true, 'a.yaml'],
    ['then config/bridge.yaml', undefined, { CONVO_BRIDGE_CONFIG: 'c.yaml' }, true, 'config/bridge.yaml'],
    ['then the variable', undefined, { CONVO_BRIDGE_CONFIG: 'c.yaml' }, false, 'c.yaml'],
    ['else nothing', undefined, {}, false, undefined],
  ])('config path: %s', (_name, flag, env, exists, expected) => {
    expect(resolveConfigPath(flag, env, () => exists)).toBe(expected);
  });
});

describe('convo-bridge explain', () => {
  const dir = mkdtempSync(join(tmpdir(), 'explain-'));
  writeFileSync(join(dir, 'bad-event.json'), JSON.stringify({ v: 1, kind: 'message_in' }));
  const args = ['explain', '--config', 'config/bridge.example.yaml'];

  it('prints matched rules, reasons and actions', async () => {
    const { code, stdout } = await run([
      ...args,
      '--event',
      'config/examples/event-catalog.json',
      '--now',
      '2026-11-23T03:20:05Z',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("  MATCH catalog              text has keyword 'katalog'\n");
    expect(stdout).toContain(
      '  no    after-hours          business hours are open (Mon 10:20 Asia/Jakarta)\n',
    );
    expect(stdout).toContain(
      '  1. [catalog#0] reply document: https://cdn.example.com/katalog.pdf caption "Katalog terbaru"\n',
    );
    expect(stdout).toContain('(explain only plans: nothing was sent)');
  });

  it('explains a webhook body exactly as the platform sends it', async () => {
    const { code, stdout } = await run([
      ...args,
      '--event',
      'test/fixtures/webhooks/channel-message-in.json',
      '--now',
      '2026-11-23T03:15:00Z',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('event: message_in (channel.message_in) in conversation conv_8f3a2b1c');
    expect(stdout).toContain(
      '  no    catalog              text has none of the keywords [katalog, catalog]\n',
    );
    expect(stdout).toContain('actions: none');
  });

  it('prints the plan as JSON with --json, using --facts', async () => {
    const facts = join(dir, 'facts.json');
    writeFileSync(
      facts,
      JSON.stringify({
        lastCustomerMessageAt: '2026-11-22T13:00:00Z',
        onceMarks: { 'after-hours#0': '2026-11-22T13:00:00Z' },
      }),
    );
    const { code, stdout } = await run([
      ...args,
      '--event',
      'config/examples/event-after-hours.json',
      '--now',
      '2026-11-22T13:30:05Z',
      '--facts',
      facts,
      '--json',
    ]);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout);
    expect(plan.outcomes[2]).toEqual({
      rule: 'after-hours',
      status: 'not_matched',
      reason: 'suppressed: once_per_conversation 12h (last 30m 5s ago)',
      notes: [],
      cooldownMs: null,
    });
    expect(plan.actions).toEqual([]);
  });

  it.each([
    [
      'a missing event file',
      ['--event', 'nope.json'],
      'convo-bridge: cannot read the event file nope.json (ENOENT): check the path\n',
    ],
    [
      'an event that is not JSON',
      ['--event', 'config/bridge.example.yaml'],
      /^convo-bridge: config\/bridge\.example\.yaml is not valid JSON \(/,
    ],
    [
      'JSON that is neither a webhook body nor an event',
      ['--event', 'package.json'],
      /^convo-bridge: package\.json is neither a webhook body the receiver understands \(.+\), a canonical ConversationEvent \(.+\) nor a recorded line \(convo-bridge events export\)/,
    ],
    [
      'a canonical event with wrong fields',
      ['--event', join(dir, 'bad-event.json')],
      /bad-event\.json is not a canonical ConversationEvent:\n/,
    ],
    [
      'a bad --now',
      ['--event', 'config/examples/event-catalog.json', '--now', 'tomorrow'],
      'convo-bridge: --now "tomorrow": not an ISO-8601 instant with a zone: write e.g. 2026-11-23T03:15:00Z\n',
    ],
    [
      'a --now of a day that does not exist (V8 would roll it over to 2026-03-02)',
      ['--event', 'config/examples/event-catalog.json', '--now', '2026-02-30T00:00:00Z'],
      'convo-bridge: --now "2026-02-30T00:00:00Z": 2026-02-30 is not a date of the calendar: write e.g. 2026-11-23T03:15:00Z\n',
    ],
    [
      'a webhook body whose timestamp cannot be read (it used to become now)',
      ['--event', 'test/fixtures/webhooks/timestamp-unparseable.json'],
      'convo-bridge: test/fixtures/webhooks/timestamp-unparseable.json: timestamp: "kemarin sore" is not a time: write ISO-8601 with a zone (2026-11-23T03:15:00Z), Unix seconds or milliseconds, or WIB "2026-11-23 10:15:00"; or leave it out to use the time of evaluation\n',
    ],
  ])('fails clearly on %s', async (_name, extra, message) => {
    const { code, stderr } = await run([...args, ...extra]);
    expect(code).toBe(1);
    if (typeof message === 'string') expect(stderr).toBe(message);
    else expect(stderr).toMatch(message);
  });
});

describe('convo-bridge schema', () => {
  it('prints the draft-07 JSON Schema', async () => {
    const { code, stdout } = await run(['schema']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(configJsonSchema());
  });
});

describe('convo-bridge --version', () => {
  it('prints the package version and exits 0', async () => {
    const { code, stdout } = await run(['--version']);
    expect(code).toBe(0);
    const pkg = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync('package.json', 'utf8'))) as {
      version: string;
    };
    expect(stdout).toBe(`${pkg.version}\n`);
  });
});

describe('the example config', () => {
  it('takes the receiver host from $RECEIVER_HOST (default 0.0.0.0)', async () => {
    Object.assign(process.env, EXAMPLE_ENV);
    const saved = process.env.RECEIVER_HOST;
    try {
      process.env.RECEIVER_HOST = '127.0.0.1';
      const local = await run(['validate', '--no-redis', 'config/bridge.example.yaml']);
      expect(local.stdout).toContain('receiver: 127.0.0.1:8080/webhooks/platform');
      delete process.env.RECEIVER_HOST;
      const all = await run(['validate', '--no-redis', 'config/bridge.example.yaml']);
      expect(all.stdout).toContain('receiver: 0.0.0.0:8080/webhooks/platform');
    } finally {
      if (saved === undefined) delete process.env.RECEIVER_HOST;
      else process.env.RECEIVER_HOST = saved;
    }
  });
});
