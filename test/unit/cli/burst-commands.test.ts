import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';

/** explain and rule tests with debounced rules (issue 28), on config/examples/bridge.bursts.yaml. */

const CONFIG = 'config/examples/bridge.bursts.yaml';
const BURST = ['burst-1-halo', 'burst-2-tanya', 'burst-3-pesanan'].map((f) => `config/examples/${f}.json`);

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe('convo-bridge explain with a debounced rule', () => {
  const explain = (...events: string[]) => [
    'explain',
    '--config',
    CONFIG,
    ...events.flatMap((e) => ['--event', e]),
    '--now',
    '2026-11-23T03:15:11Z',
  ];

  it('shows the burst of three --event files, evaluated once when it ends', async () => {
    const { code, stdout, stderr } = await run(explain(...BURST));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(
      "  burst answer-fragments     debounced (debounce 20s, max_wait 2m, cancelled by agent_reply): this message joins the rule's burst, evaluated once when the burst ends\n",
    );
    expect(stdout).toContain(
      [
        'bursts (debounced rules: evaluated once per burst of customer messages):',
        '  answer-fragments: debounce 20s, max_wait 2m, cancelled by agent_reply',
        '    burst of 3 message(s) received 2026-11-23T03:15:00.000Z .. 2026-11-23T03:15:11.000Z; ends 2026-11-23T03:15:31.000Z (Mon 2026-11-23 10:15 Asia/Jakarta, quiet for 20s)',
        '      text: "halo kak\\nmau tanya\\npesanan saya belum sampai"',
        "      MATCH burst of 3 message(s): text has keyword 'pesanan'",
        '      1. [answer-fragments#0] reply text: "Terima kasih Sari, kami cek pesanan Anda sekarang (3 pesan)."',
      ].join('\n'),
    );
    expect(stdout).toMatch(/\n\(explain only plans: nothing was sent\)\n$/);
  });

  it('one message is a burst of one: what happens if nothing follows', async () => {
    const { stdout } = await run(explain(BURST[0] as string));
    expect(stdout).toContain('  (this message alone: what happens if the customer writes nothing more');
    expect(stdout).toContain(
      '      no    burst of 1 message(s): text has none of the keywords [pesanan, order, kirim, paket]\n',
    );
  });

  it('--json lists the bursts with their outcome and actions', async () => {
    const { stdout } = await run([...explain(...BURST), '--json']);
    const json = JSON.parse(stdout) as {
      bursts: { rule: string; dueAt: string; burst: { count: number }; actions: unknown[] }[];
    };
    expect(json.bursts).toMatchObject([
      {
        rule: 'answer-fragments',
        dueAt: '2026-11-23T03:15:31.000Z',
        burst: { count: 3 },
        actions: [{ type: 'reply' }],
      },
    ]);
  });

  it('refuses several events that are not customer messages of one conversation', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'explain-burst-'));
    const other = join(dir, 'other.json');
    const base = JSON.parse(await readFile(BURST[0] as string, 'utf8'));
    await writeFile(other, JSON.stringify({ ...base, conversationId: 'conv-9' }));
    const elsewhere = await run(explain(BURST[0] as string, other));
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain(
      `${other} is in conversation conv-9, the first --event in conv-1004: several --event files are customer messages of one conversation`,
    );
    const agent = join(dir, 'agent.json');
    await writeFile(agent, JSON.stringify({ ...base, kind: 'agent_reply', name: 'agent.message_out' }));
    const mixed = await run(explain(BURST[0] as string, agent));
    expect(mixed.stderr).toContain(
      `${agent} is agent_reply: several --event files are one burst of customer messages`,
    );
  });
});

describe('convo-bridge test with burst cases', () => {
  it('passes the shipped burst tests', async () => {
    const { code, stdout } = await run(['test', 'config/examples/bridge.bursts.rules-test.yaml']);
    expect(stdout).toContain('3 passed, 0 failed');
    expect(code).toBe(0);
  });

  async function testFile(body: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'rules-test-burst-'));
    const file = join(dir, 'burst.rules-test.yaml');
    await writeFile(file, `config: ${resolve(CONFIG)}\n${body}`);
    return file;
  }

  it('a burst grouped otherwise than expected fails with a diff of the burst sizes', async () => {
    const file = await testFile(`cases:
  - name: two messages 30 s apart are two bursts
    event_file: ${resolve(BURST[0] as string)}
    burst:
      - { at: "2026-11-23T03:15:00Z", text: "pesanan" }
      - { at: "2026-11-23T03:15:30Z", text: "belum sampai" }
    expect: { bursts: [2] }
`);
    const { code, stdout } = await run(['test', file]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      [
        '      bursts (messages per burst, in the order they end): - expected, + actual',
        '        - 2 message(s)',
        '        + 1 message(s), 1 message(s)',
      ].join('\n'),
    );
  });

  it('a burst case needs a customer message and a debounced rule', async () => {
    const file = await testFile(`cases:
  - name: an agent reply as the event
    event: { v: 1, kind: agent_reply, name: agent.message_out, key: "a|1", conversationId: c, messageId: "1", text: "x", caption: "", contentType: text, attachments: [], channel: { id: null, name: null, engine: whatsapp }, business: null, senderName: null, conversationLabel: null, aiName: null, agentName: Rina, needHuman: false, occurredAt: "2026-11-23T03:15:00Z", receivedAt: "2026-11-23T03:15:00Z" }
    burst: [ { at: "2026-11-23T03:15:00Z", text: "pesanan" } ]
    expect: { no_action: true }
`);
    const { stdout } = await run(['test', file]);
    expect(stdout).toContain(
      "burst: lists customer messages, but the case's event is agent_reply: give a customer message (message_in) as the event",
    );
    const plain = await testFile(`cases:
  - name: the example has no debounced rule
    event_file: ${resolve(BURST[0] as string)}
    burst: [ { at: "2026-11-23T03:15:00Z", text: "pesanan" } ]
    expect: { no_action: true }
`);
    const { stdout: out } = await run(['test', '--config', 'config/bridge.example.yaml', plain]);
    expect(out).toContain(
      'burst: the rules under test have no debounced rule (debounce: DURATION on a message_in rule)',
    );
  });
});
