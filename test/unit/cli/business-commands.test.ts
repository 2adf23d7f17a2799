import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';

/** validate, explain, test and backtest with a config of several businesses (issue 26). */

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const CONFIG = 'test/fixtures/config/businesses/bridge.yaml';
const ONE = 'config/bridge.example.yaml';
const CATALOG = ['--event', 'config/examples/event-catalog.json', '--now', '2026-11-23T03:20:05Z'];
const RECORDED = ['--from', 'config/examples/recorded-events.jsonl'];
const IDS = 'one of toko-a, toko-b, toko-c';

describe('convo-bridge validate with businesses', () => {
  it('explains each business in two lines, what they share once, and prints no secret', async () => {
    const { code, stdout, stderr } = await run(['validate', CONFIG]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`config OK: 3 businesses (${CONFIG}, 1 from businesses_dir)`);
    expect(lines[1]).toBe('  receiver: 0.0.0.0:8080, one webhook path per business');
    expect(stdout).toContain(
      `  business toko-a (${CONFIG}:21): current form, https://api.toko-a.example.com, auth headers\n` +
        '    webhook /webhooks/toko-a, 1 webhook secret; 2 rules, shared\n',
    );
    expect(stdout).toContain(
      `  business toko-b (${CONFIG}:26): earlier form, https://api.toko-b.example.com, auth bearer-secret\n` +
        '    webhook /hooks/toko-b, 1 webhook secret; 1 rule, its own\n',
    );
    expect(stdout).toContain(
      `  business toko-c (${join('test/fixtures/config/businesses/dir/toko-c.yaml')}:2): current form, https://api.toko-c.example.com, auth headers\n`,
    );
    expect(stdout).toContain('  default (toko-b, toko-c): receiver.secrets not set:');
    expect(stdout).toContain(
      '  shared rules (every business without rules: of its own):\n    rule escalate: on message_in, 2 actions\n',
    );
    for (const secret of ['secret-a', 'secret-b', 'secret-c', 'webhook-a'])
      expect(stdout).not.toContain(secret);
  });

  it('prints every problem of every business at its file:line:column, and exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'validate-businesses-'));
    const file = join(dir, 'bridge.yaml');
    writeFileSync(
      file,
      `platform: { form: current }
businesses:
  - id: toko-a
    platform: { base_url: https://a.example.com, auth: { business_id: a, secret: same } }
  - id: toko-a
    platform: { base_url: https://b.example.com, auth: { business_id: b, secret: same } }
    redis: {}
`,
    );
    const { code, stdout, stderr } = await run(['validate', file]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      `${file}:4:82: the same webhook secret is accepted by businesses toko-a (${file}:4:82), toko-a (${file}:6:82): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets`,
      `${file}:5:9: business id "toko-a" is used twice (also at ${file}:3:9): give each business its own id`,
      `${file}:6:82: the same webhook secret is accepted by businesses toko-a (${file}:4:82), toko-a (${file}:6:82): a webhook meant for one would be accepted by the other; give each business its own receiver.secrets; a business without receiver.secrets accepts its platform.auth.secret, so two businesses with one platform secret need receiver.secrets`,
      `${file}:7:5: business "toko-a": redis is shared by all businesses and belongs at the top level: move it there`,
      `convo-bridge: config ${file} is invalid: 4 problems`,
    ]);
  });
});

describe('convo-bridge explain --business', () => {
  it("uses that business's rules", async () => {
    const b = await run(['explain', '--config', CONFIG, '--business', 'toko-b', ...CATALOG]);
    expect(b.code).toBe(0);
    expect(b.stdout).toMatch(/ {2}MATCH catalog +text has keyword 'katalog'\n/);
    const a = await run(['explain', '--config', CONFIG, '--business', 'toko-a', ...CATALOG]);
    expect(a.code).toBe(0);
    expect(a.stdout).not.toContain('catalog ');
    expect(a.stdout).toMatch(/ {2}no +escalate +text has none of the keywords \[refund\]\n/);
  });

  it.each([
    [
      'no --business with several',
      CONFIG,
      [],
      `convo-bridge: ${CONFIG} has 3 businesses: say which with --business ID, ${IDS}\n`,
    ],
    [
      'an id the config does not have',
      CONFIG,
      ['--business', 'toko-x'],
      `convo-bridge: no business "toko-x" in ${CONFIG}: did you mean "toko-a"?\n`,
    ],
    [
      'an id far from all',
      CONFIG,
      ['--business', 'warung'],
      `convo-bridge: no business "warung" in ${CONFIG}; its businesses are toko-a, toko-b, toko-c\n`,
    ],
    [
      'an id other than default without businesses',
      ONE,
      ['--business', 'toko-a'],
      `convo-bridge: ${ONE} has no businesses (it is one business, "default"): leave out --business, or write --business default\n`,
    ],
  ])('stops with exit 1 on %s', async (_name, config, flag, message) => {
    const { code, stdout, stderr } = await run(['explain', '--config', config, ...flag, ...CATALOG]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(message);
  });

  it('accepts --business default for a config without businesses', async () => {
    const { code, stdout } = await run(['explain', '--config', ONE, '--business', 'default', ...CATALOG]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/ {2}MATCH catalog +text has keyword 'katalog'\n/);
  });
});

describe('convo-bridge test --business', () => {
  it('runs a test file as the business it names (business:), and --business overrides it', async () => {
    const named = await run(['test', '--config', CONFIG]);
    expect(named.code).toBe(0);
    expect(named.stdout).toContain(
      `(rules of ${CONFIG}, business toko-b)\n  ✓ toko-b answers a catalog request`,
    );
    const other = await run(['test', '--config', CONFIG, '--business', 'toko-a']);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain(
      `(rules of ${CONFIG}, business toko-a)\n  ✗ toko-b answers a catalog request`,
    );
  });

  it('stops a file that names no business of a config of several, listing the ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'test-businesses-'));
    const file = join(dir, 'x.rules-test.yaml');
    writeFileSync(
      file,
      `config: ${resolve(CONFIG)}\ncases:\n  - { name: c, event_file: ${resolve('config/examples/event-catalog.json')}, expect: { matched: [] } }\n`,
    );
    const { code, stdout } = await run(['test', file]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      `✗ the file cannot be run:\n      ${resolve(CONFIG)} has 3 businesses: say which with --business ID (or business: in the test file), ${IDS}\n`,
    );
  });
});

describe('convo-bridge backtest --business', () => {
  it("replays the events under that business's rules", async () => {
    const { code, stdout } = await run(['backtest', '--config', CONFIG, '--business', 'toko-b', ...RECORDED]);
    expect(code).toBe(0);
    expect(stdout).toContain(`backtest of ${CONFIG} (business toko-b) over 40 recorded event(s)`);
    expect(stdout).toMatch(/\ncatalog +4 +4 +0\n/);
  });

  it.each([
    [
      'no --business with several',
      CONFIG,
      [],
      `convo-bridge: ${CONFIG} has 3 businesses: say which with --business ID, ${IDS}\n`,
    ],
    [
      'an id other than default without businesses',
      ONE,
      ['--business', 'toko-a'],
      `convo-bridge: ${ONE} has no businesses (it is one business, "default"): leave out --business, or write --business default\n`,
    ],
  ])('stops with exit 1 on %s', async (_name, config, flag, message) => {
    const { code, stderr } = await run(['backtest', '--config', config, ...flag, ...RECORDED]);
    expect(code).toBe(1);
    expect(stderr).toBe(message);
  });

  it('accepts --business default for a config without businesses', async () => {
    const plain = await run(['backtest', '--config', ONE, ...RECORDED]);
    const named = await run(['backtest', '--config', ONE, '--business', 'default', ...RECORDED]);
    expect(named.code).toBe(plain.code);
    expect(named.stdout).toBe(plain.stdout);
  });
});
