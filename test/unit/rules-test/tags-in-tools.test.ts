import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ConversationEvent } from '../../../src/events/conversation-event.js';
import { simulate } from '../../../src/record/backtest.js';
import {
  FactsJsonSchema,
  factsFromJson,
  factsToJson,
  type RecordedEvent,
  recordedLine,
} from '../../../src/record/recorded-event.js';
import { runRuleTestFile } from '../../../src/rules-test/run-rule-tests.js';
import { makeEvent } from '../../support/make-event.js';

/**
 * Tags in the tools that evaluate rules without calling anything (issue 28, point 2): rule tests
 * give a case its tags and assert the tags after; explain reads them from --facts and shows them;
 * recorded facts keep them; backtests carry them from event to event of a conversation.
 */

const VIP_CONFIG = resolve('config/examples/bridge.vip.yaml');
const VIP_TESTS = 'config/examples/bridge.vip.rules-test.yaml';

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

async function tempFile(name: string, body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tags-tools-'));
  const file = join(dir, name);
  await writeFile(file, body);
  return file;
}

const COMPLAINT = `
    event:
      event: channel.message_in
      timestamp: "2026-11-23T03:15:00Z"
      conversation_id: c1
      message: { id: m1, channel: { engine: telegram }, content: { type: text, text: "mau refund" } }`;

describe('rule tests with tags', () => {
  it('the shipped VIP tests pass', async () => {
    const { code, out } = await run(['test', VIP_TESTS]);
    expect(out).toContain('5 passed, 0 failed');
    expect(code).toBe(0);
  });

  it('a case gives its tags (a list, or expiries) and asserts the tags after, in any order', async () => {
    const file = await tempFile(
      'vip.rules-test.yaml',
      `config: ${VIP_CONFIG}
now: 2026-11-23T03:15:00Z
cases:
  - name: tags as a list
${COMPLAINT}
    facts: { tags: [ VIP, regular ] }
    expect: { matched: [ vip-complaint ], tags: [ regular, vip ] }
  - name: a wrong expectation
${COMPLAINT}
    facts: { tags: { vip: null, old: "2026-11-23T03:15:00Z" } }
    expect: { tags: [ gold, vip, old ] }
  - name: matcher on a tag action
    event:
      event: channel.message_in
      timestamp: "2026-11-23T03:15:00Z"
      conversation_id: c2
      message: { id: m2, channel: { engine: telegram }, content: { type: text, text: "saya platinum" } }
    expect: { actions: [ { type: tag, tags: [ gold ] } ] }
`,
    );
    const result = await runRuleTestFile(file);
    expect(result.error).toBeUndefined();
    expect(result.cases.map((c) => c.failures.map((f) => [f.check, f.diff]))).toEqual([
      [],
      // `old` expired at the case's now: it is not among the tags after.
      [['tags after the event (any order)', ['- gold', '- old', '  vip']]],
      [['actions (exact, in order)', ['- 1. tag gold', '+ 1. tag [mark-vip#0] vip for 720h']]],
    ]);
  });

  it('refuses a tag name that is not one, naming file:line:column', async () => {
    const file = await tempFile(
      'bad.rules-test.yaml',
      `config: ${VIP_CONFIG}\ncases:\n  - name: x\n${COMPLAINT}\n    expect: { tags: [ "no spaces" ] }\n`,
    );
    const result = await runRuleTestFile(file);
    expect(result.error).toContain(`${file}:10:23: `);
    expect(result.error).toContain('cases.0.expect.tags.0: expected a tag name: 1 to 64 letters');
  });
});

describe('explain with tags', () => {
  it('reads tags from --facts, prints them before and after, and the tags condition', async () => {
    const facts = await tempFile('facts.json', JSON.stringify({ tags: { vip: '2026-12-20T00:00:00Z' } }));
    const { code, out } = await run([
      'explain',
      '--config',
      VIP_CONFIG,
      '--event',
      'config/examples/event-complaint.json',
      '--facts',
      facts,
      '--now',
      '2026-11-23T03:15:05Z',
    ]);
    expect(code).toBe(0);
    expect(out).toContain('\ntags: vip\n');
    expect(out).toContain(
      '  no    mark-vip             none of any: matched (channel name is "WhatsApp Toko Maju", rule wants "VIP Line"; text has none of the keywords [member gold, platinum])\n',
    );
    expect(out).toContain(
      "  MATCH vip-complaint        text has keywords 'refund', 'kecewa'; tagged 'vip'\n",
    );
    expect(out).toContain('  3. [vip-complaint#2] forward the event to destination "crm" with tags [vip]\n');
    expect(out).toContain('\ntags after the event: vip\n');
  });

  it('without --facts a VIP config shows no tags; --json carries them', async () => {
    const { code, out } = await run([
      'explain',
      '--config',
      VIP_CONFIG,
      '--event',
      'config/examples/event-complaint.json',
      '--now',
      '2026-11-23T03:15:05Z',
      '--json',
    ]);
    expect(code).toBe(0);
    const plan = JSON.parse(out);
    expect(plan.tags).toEqual({ before: [], after: [] });
    expect(plan.matched.map((m: { rule: string }) => m.rule)).toEqual(['escalate-complaints']);
  });

  it('a config without tags prints what it printed before', async () => {
    const { out } = await run([
      'explain',
      '--config',
      'config/bridge.example.yaml',
      '--event',
      'config/examples/event-complaint.json',
      '--now',
      '2026-11-23T03:15:05Z',
    ]);
    expect(out).not.toContain('tags');
  });

  it('refuses a facts file with a bad tag name, saying where', async () => {
    const facts = await tempFile('bad-facts.json', JSON.stringify({ tags: ['v i p'] }));
    const { code, err } = await run([
      'explain',
      '--config',
      VIP_CONFIG,
      '--event',
      'config/examples/event-complaint.json',
      '--facts',
      facts,
    ]);
    expect(code).not.toBe(0);
    expect(err).toContain(`${facts}: tags.0: expected a tag name`);
  });
});

describe('the recipe "escalate a VIP faster" in docs/rules.md', () => {
  const docs = readFileSync('docs/rules.md', 'utf8');
  const recipe = docs.slice(
    docs.indexOf('**Escalate a VIP faster**'),
    docs.indexOf('## Conversation clocks'),
  );

  it('shows the rules of config/examples/bridge.vip.yaml', () => {
    const yaml = /```yaml\n([\s\S]*?)```/.exec(recipe)?.[1] ?? '';
    const header =
      'platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }\nreceiver: { secrets: [ w ] }\ndestinations: { crm: { url: "https://crm.example.com" } }\nrules:\n';
    const shown = parseConfigText(`${header}${yaml.replace(/^/gm, '  ')}`, {
      fileName: 'docs.yaml',
      env: {},
    });
    const example = parseConfigText(readFileSync('config/examples/bridge.vip.yaml', 'utf8'), {
      fileName: 'bridge.vip.yaml',
      env: {},
      allowMissingEnv: true,
    });
    expect(shown.config.rules).toEqual(example.config.rules.slice(0, 2));
  });

  it.each([...recipe.matchAll(/```\n\$ (convo-bridge [^\n]*)\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]]))(
    'prints what the docs show: %s',
    async (command, shown) => {
      const { out } = await run((command ?? '').split(' ').slice(1));
      expect(out).toBe(shown);
    },
  );
});

describe('recorded facts and backtests keep tags', () => {
  it('facts JSON round-trips the tags an event saw, with their expiries', () => {
    const until = Date.parse('2026-12-20T00:00:00Z');
    const json = factsToJson({
      lastCustomerMessageAt: null,
      isFirstCustomerMessage: false,
      onceMarks: {},
      tags: { vip: until, gold: null },
    });
    expect(json.tags).toEqual({ vip: '2026-12-20T00:00:00.000Z', gold: null });
    expect(factsFromJson(FactsJsonSchema.parse(JSON.parse(JSON.stringify(json)))).tags).toEqual({
      vip: until,
      gold: null,
    });
    // No tags: the line is as before.
    expect(
      factsToJson({ lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} }),
    ).toEqual({
      lastCustomerMessageAt: null,
      isFirstCustomerMessage: false,
      onceMarks: {},
    });
  });

  const rules = parseConfigText(
    `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
rules:
  - name: mark
    on: message_in
    if: { text: { any_keywords: [ vip ] } }
    then: [ { tag: vip, for: 1h } ]
  - name: fast
    on: message_in
    if: { tags: { any: [ vip ] } }
    then: [ { need_human: true } ]
  - name: later
    on: message_in
    if: { text: { any_keywords: [ nanti ] } }
    then: [ { after: 10m, then: [ { tag: late } ] } ]
  - name: late
    on: message_in
    if: { tags: { all: [ late ] } }
    then: [ { note: "late" } ]
`,
    { fileName: 'tags.yaml', env: {} },
  ).rules;
  const T0 = Date.parse('2026-11-23T03:00:00.000Z');
  let seq = 0;
  const line = (
    conversationId: string,
    minutes: number,
    text: string,
    tags?: Record<string, string | null>,
  ) => {
    seq += 1;
    const now = new Date(T0 + minutes * 60_000);
    const event: ConversationEvent = makeEvent({
      conversationId,
      text,
      messageId: `m${seq}`,
      key: `e|m${seq}`,
      occurredAt: now.toISOString(),
      receivedAt: now.toISOString(),
    });
    const facts = { lastCustomerMessageAt: null, isFirstCustomerMessage: false, onceMarks: {} };
    const recorded: RecordedEvent = recordedLine({ seq, now, event, facts });
    return tags ? { ...recorded, facts: { ...recorded.facts, tags } } : recorded;
  };

  it("a backtest carries a conversation's tags from event to event, never to another; for: and timers count", () => {
    const lines = [
      line('A', 0, 'saya vip'),
      line('B', 1, 'halo'),
      line('A', 2, 'halo'),
      line('A', 30, 'nanti ya'),
      line('A', 45, 'halo'),
      line('A', 61, 'halo'),
      // A recording that starts mid-conversation: the first event's facts seed its tags.
      line('C', 0, 'halo', { vip: '2026-11-23T03:30:00Z' }),
      line('C', 31, 'halo'),
    ];
    const plans = simulate(rules, lines, T0 + 120 * 60_000).events;
    const matched = (c: string) =>
      plans.filter((p) => p.conversationId === c).map((p) => p.matched.join('+'));
    expect(matched('A')).toEqual(['mark+fast', 'fast', 'fast+later', 'fast+late', 'late']);
    expect(matched('B')).toEqual(['']);
    expect(matched('C')).toEqual(['fast', '']);
    expect(plans[0]?.actions).toEqual([
      { id: 'mark#0', rule: 'mark', type: 'tag', tags: ['vip'], forMs: 3_600_000 },
      { id: 'fast#0', rule: 'fast', type: 'need_human' },
    ]);
  });
});
